package rowio

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// A Parquet file's pages carry CRCs that parquet-go checks before it
// decodes them, but its footer (the FileMetaData: schema, row groups,
// column chunk offsets, statistics) carries none: one flipped bit in a
// null count or a minimum goes unnoticed, and readers act on it. A
// dataset's manifest records a FooterSum of every data file it commits,
// and readers check it (FooterSum.Check, through DataFile.Open) before
// they trust the footer.

// FooterSum is what a manifest records of a Parquet file's footer: the
// bytes from the footer's start to the end of the file (the FileMetaData,
// its 4-byte length and the "PAR1" magic), their count and CRC-32C
// (Castagnoli). The zero FooterSum is "not recorded" (files of dataset
// formats before 5, and files that are no dataset's).
type FooterSum struct {
	Size   int64
	CRC32C uint32
}

// Recorded reports whether s is a recorded sum rather than the zero one.
func (s FooterSum) Recorded() bool { return s.Size > 0 }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SumFooter returns the FooterSum of the Parquet file of size bytes in r,
// reading only its last 8 bytes (the footer's length and the magic), then
// the footer. It checks no more than it needs to find the footer: a file
// that ends in no footer is a CorruptError.
func SumFooter(r io.ReaderAt, size int64) (FooterSum, error) {
	var tail [8]byte
	if size < 12 {
		return FooterSum{}, corrupt("%d bytes is too short for a Parquet file", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return FooterSum{}, corrupt("reading the footer: %v", err)
	}
	if string(tail[4:]) != "PAR1" {
		return FooterSum{}, corrupt("no PAR1 magic at the end (truncated file?)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4])) + 8
	if n > size-4 {
		return FooterSum{}, corrupt("the footer claims %d bytes in a %d-byte file (truncated file?)", n-8, size)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil {
		return FooterSum{}, corrupt("reading the footer: %v", err)
	}
	return FooterSum{Size: n, CRC32C: crc32.Checksum(buf, castagnoli)}, nil
}

// Check reads the last s.Size bytes of the Parquet file of size bytes in
// r (named path in errors) and checks their CRC-32C against s, before
// anything of the footer is decoded: a mismatch is a *FooterError. It
// returns a reader of the same file that serves those bytes from memory,
// so that what the caller then decodes of the footer is what was checked
// (and is not read from the disk again). A zero s (not recorded) checks
// nothing and returns r.
func (s FooterSum) Check(r io.ReaderAt, size int64, path string) (io.ReaderAt, error) {
	if !s.Recorded() {
		return r, nil
	}
	if s.Size > size {
		return nil, &FooterError{Path: path, What: fmt.Sprintf("%d bytes, shorter than the %d-byte footer the manifest records", size, s.Size)}
	}
	buf := make([]byte, s.Size)
	if _, err := r.ReadAt(buf, size-s.Size); err != nil {
		return nil, fmt.Errorf("%s: reading the footer: %w", path, err)
	}
	if crc := crc32.Checksum(buf, castagnoli); crc != s.CRC32C {
		return nil, &FooterError{Path: path, What: fmt.Sprintf("footer CRC-32C %08x, the manifest says %08x", crc, s.CRC32C)}
	}
	return &checkedTail{r: r, at: size - s.Size, tail: buf}, nil
}

// FooterError is a dataset file whose footer does not match the FooterSum
// its manifest recorded: damage, which readers refuse before they decode
// the footer. A writer that takes the file's bytes into a new file also
// refuses one whose whole content does not match the manifest's FileSum
// (FileSummer.Check), with the same error.
type FooterError struct {
	Path string // the file
	What string // e.g. "footer CRC-32C 1234abcd, the manifest says 89abcdef"
}

func (e *FooterError) Error() string {
	return fmt.Sprintf("dataset: %s: %s: damaged (status --verify lists every damaged file; "+
		"restore them from a backup of the dataset, see status --help)", e.Path, e.What)
}

// Is makes a FooterError match ErrCorrupt, as other damage does.
func (e *FooterError) Is(target error) bool { return target == ErrCorrupt }

// checkedTail is a file (r) whose bytes from at on are tail, read once
// and checked (FooterSum.Check).
type checkedTail struct {
	r    io.ReaderAt
	at   int64
	tail []byte
}

func (c *checkedTail) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("rowio: read at negative offset %d", off)
	}
	if off >= c.at {
		if off-c.at >= int64(len(c.tail)) {
			return 0, io.EOF
		}
		n := copy(p, c.tail[off-c.at:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if off+int64(len(p)) <= c.at {
		return c.r.ReadAt(p, off)
	}
	k := int(c.at - off) // the part before the tail
	n, err := c.r.ReadAt(p[:k], off)
	if err != nil {
		return n, err
	}
	m, err := c.ReadAt(p[k:], c.at)
	return n + m, err
}
