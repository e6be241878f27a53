package rowio

import (
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"sync"
)

// A page CRC covers a page's data, not its header, and the footer has
// its own FooterSum, but nothing a reader checks covers every byte of a
// file. A writer that takes a file's bytes into a new one (a splice
// copies column chunks byte for byte, a rewrite decodes and re-encodes
// them) would carry damage they miss into a file with a new, valid
// checksum. So a writer checks the whole file against the size and
// CRC-32C its manifest records (FileSum), on the bytes it reads anyway
// (FileSummer).

// FileSum is what a manifest records of a whole data file: its size and
// CRC-32C (Castagnoli). The zero FileSum is "not recorded" (a file that
// is no dataset's).
type FileSum struct {
	Size   int64
	CRC32C uint32
}

// Recorded reports whether s is a recorded sum rather than the zero one.
func (s FileSum) Recorded() bool { return s.Size > 0 }

// FileSummer reads a data file and takes the CRC-32C of the bytes read
// through it, once Start has been called, whatever their order: each
// span read is summed once (bytes read again are not), and Check reads
// what no read covered and joins the spans' CRCs (crc32cCombine) into
// the whole file's, to compare with the manifest's FileSum. So a writer
// that reads the whole file anyway pays one CRC-32C pass over it, not a
// second read. It is safe for concurrent use. Its methods do nothing on
// a nil FileSummer (a file with no recorded sum).
type FileSummer struct {
	r    io.ReaderAt
	path string
	size int64 // the file's, when it was opened
	want FileSum

	mu    sync.Mutex
	on    bool
	spans []span // sorted by at, disjoint (they may touch)
}

// span is a range [at, end) of the file read since Start, and its CRC.
type span struct {
	at, end int64
	crc     uint32
}

// NewFileSummer returns a FileSummer of the file of size bytes in r,
// named path in errors, whose manifest records want (nil if want is not
// recorded).
func NewFileSummer(r io.ReaderAt, size int64, path string, want FileSum) *FileSummer {
	if !want.Recorded() {
		return nil
	}
	return &FileSummer{r: r, path: path, size: size, want: want}
}

// ReadAt reads from the file, summing what it read if Start was called.
func (s *FileSummer) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	if n > 0 {
		s.mu.Lock()
		if s.on {
			s.add(off, p[:n])
		}
		s.mu.Unlock()
	}
	return n, err
}

// Start forgets what was read before and sums every read from now on,
// for a Check after the caller has read what it needs.
func (s *FileSummer) Start() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.on, s.spans = true, s.spans[:0]
	s.mu.Unlock()
}

// add sums p, read at off, where no span covers it yet.
func (s *FileSummer) add(off int64, p []byte) {
	base, end := off, off+int64(len(p))
	// The first span that ends at or after off: one that ends at off is
	// extended (the common case, a sequential read).
	i := sort.Search(len(s.spans), func(k int) bool { return s.spans[k].end >= off })
	for off < end {
		if i < len(s.spans) && s.spans[i].at <= off {
			sp := &s.spans[i]
			if sp.end > off { // read before: skip it
				off = min(sp.end, end)
				i++
				continue
			}
			lim := end
			if i+1 < len(s.spans) {
				lim = min(lim, s.spans[i+1].at)
			}
			sp.crc = crc32.Update(sp.crc, castagnoli, p[off-base:lim-base])
			sp.end, off = lim, lim
			i++
			continue
		}
		lim := end
		if i < len(s.spans) {
			lim = min(lim, s.spans[i].at)
		}
		s.spans = append(s.spans, span{})
		copy(s.spans[i+1:], s.spans[i:])
		s.spans[i] = span{at: off, end: lim, crc: crc32.Checksum(p[off-base:lim-base], castagnoli)}
		off = lim
		i++
	}
}

// Check reads the spans of the file no read covered since Start, joins
// their CRC-32Cs with those of the spans read, and compares the file's
// size and CRC-32C with the manifest's record: a mismatch is a
// *FooterError naming the file, which a writer returns rather than commit
// the damage in a new file. It stops summing.
func (s *FileSummer) Check() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
	if s.size != s.want.Size {
		return &FooterError{Path: s.path, What: fmt.Sprintf("%d bytes, the manifest says %d", s.size, s.want.Size)}
	}
	var buf []byte
	var crc uint32
	pos := int64(0)
	fill := func(end int64) error { // sums [pos, end), read now
		for pos < end {
			if n := min(end-pos, 1<<20); int64(len(buf)) < n {
				buf = make([]byte, n)
			}
			b := buf[:min(int64(len(buf)), end-pos)]
			if _, err := s.r.ReadAt(b, pos); err != nil {
				return fmt.Errorf("%s: reading: %w", s.path, err)
			}
			crc = crc32.Update(crc, castagnoli, b)
			pos += int64(len(b))
		}
		return nil
	}
	for _, sp := range s.spans {
		if sp.end > s.size {
			break // the file grew since it was opened: read below
		}
		if err := fill(sp.at); err != nil {
			return err
		}
		crc = crc32cCombine(crc, sp.crc, sp.end-sp.at)
		pos = sp.end
	}
	if err := fill(s.size); err != nil {
		return err
	}
	s.spans = s.spans[:0]
	if crc != s.want.CRC32C {
		return &FooterError{Path: s.path, What: fmt.Sprintf("CRC-32C %08x, the manifest says %08x (the content changed)", crc, s.want.CRC32C)}
	}
	return nil
}
