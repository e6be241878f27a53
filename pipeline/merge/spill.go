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
// The results themselves, packed, go there too a chunk at a time
// (prefixed: putBytes, readBytes). The folder is made on the first put,
// and removed by close or, after a kill, by the next writer's Open
// (dataset.Scratch).
//
// put and putBytes are called by one goroutine while inputs are read;
// get and readBytes by any number once they are (ReadAt).
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

// open makes the spill's folder and file, on the first put.
func (s *metaSpill) open() error {
	if s.f != nil {
		return nil
	}
	sc, err := s.d.NewScratch()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(sc.Dir, "metadata.spill"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		sc.Remove()
		return err
	}
	s.sc, s.f = sc, f
	return nil
}

// put appends m to the spill.
func (s *metaSpill) put(m *schema.Meta) (metaRef, error) {
	s.buf = appendMeta(s.buf[:0], m)
	off, err := s.putBytes(s.buf)
	if err != nil {
		return metaRef{}, err
	}
	ref := metaRef{off: off, n: int64(len(s.buf)), infoLen: int64(len(m.InfoBytes))}
	if cap(s.buf) > 1<<20 {
		s.buf = nil // one large torrent's: not kept for the run
	}
	return ref, nil
}

// putBytes appends b to the spill (packed results, prefixed) and
// returns its offset.
func (s *metaSpill) putBytes(b []byte) (int64, error) {
	if err := s.open(); err != nil {
		return 0, err
	}
	if _, err := s.f.Write(b); err != nil {
		return 0, err // names the file
	}
	off := s.off
	s.off += int64(len(b))
	return off, nil
}

// readBytes reads len(b) bytes at off back into b. Its errors do not
// name the file (path does).
func (s *metaSpill) readBytes(b []byte, off int64) error {
	if _, err := s.f.ReadAt(b, off); err != nil {
		return fmt.Errorf("reading %d bytes at %d: %w", len(b), off, err)
	}
	return nil
}

// get reads back the metadata at ref. Its errors do not name the file
// (path does).
func (s *metaSpill) get(ref metaRef) (schema.Meta, error) {
	b := make([]byte, ref.n)
	if err := s.readBytes(b, ref.off); err != nil {
		return schema.Meta{}, err
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
