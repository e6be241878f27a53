package merge

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// metaSpill keeps the metadata of the ok results merge reads (their
// schema.Meta: info dictionary, name, files; megabytes each) in a file of
// a dataset scratch folder, so that the results merge holds while it
// applies them do not grow with the metadata: each keeps a metaRef, and
// torrentPartition reads a torrent's metadata back as it writes the row.
// The folder is made on the first put, and removed by close or, after a
// kill, by the next writer's Open (dataset.Scratch).
//
// put is called by one goroutine while inputs are read; get by any
// number once they are (ReadAt).
type metaSpill struct {
	d   *dataset.Dataset
	sc  *dataset.Scratch
	f   *os.File
	off int64  // bytes written
	buf []byte // put's encoding buffer
}

// metaRef is where a result's metadata went: n bytes at off of the spill
// (n 0: nowhere, the row holds its metadata), and the length of its info
// dictionary (a torrent's metadata_size).
type metaRef struct {
	off, n, infoLen int64
}

// spilled reports whether the row's metadata is in the spill.
func (m metaRef) spilled() bool { return m.n > 0 }

func newMetaSpill(d *dataset.Dataset) *metaSpill { return &metaSpill{d: d} }

// put appends m to the spill.
func (s *metaSpill) put(m *schema.Meta) (metaRef, error) {
	if s.f == nil {
		sc, err := s.d.NewScratch()
		if err != nil {
			return metaRef{}, err
		}
		f, err := os.OpenFile(filepath.Join(sc.Dir, "metadata.spill"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			sc.Remove()
			return metaRef{}, err
		}
		s.sc, s.f = sc, f
	}
	s.buf = appendMeta(s.buf[:0], m)
	if _, err := s.f.Write(s.buf); err != nil {
		return metaRef{}, err // names the file
	}
	ref := metaRef{off: s.off, n: int64(len(s.buf)), infoLen: int64(len(m.InfoBytes))}
	s.off += ref.n
	if cap(s.buf) > 1<<20 {
		s.buf = nil // one large torrent's: not kept for the run
	}
	return ref, nil
}

// get reads back the metadata at ref. Its errors do not name the file
// (path does).
func (s *metaSpill) get(ref metaRef) (schema.Meta, error) {
	b := make([]byte, ref.n)
	if _, err := s.f.ReadAt(b, ref.off); err != nil {
		return schema.Meta{}, fmt.Errorf("reading %d bytes at %d: %w", ref.n, ref.off, err)
	}
	m, err := decodeMeta(b)
	if err != nil {
		return m, fmt.Errorf("at %d: %w", ref.off, err)
	}
	return m, nil
}

// path names the spill file in errors.
func (s *metaSpill) path() string {
	if s.f == nil {
		return "metadata spill"
	}
	return s.f.Name()
}

// close removes the spill.
func (s *metaSpill) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.sc != nil {
		s.sc.Remove()
		s.sc = nil
	}
}
