package rowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// FastSnappy is parquet-go's SNAPPY codec with klauspost's fastest
// Snappy-compatible encoder (s2.EncodeSnappy) instead of the "better" one
// parquet-go's codec picks (klauspost/compress/snappy.Encode), which spent
// 10% of a 100M-hash merge. The output is plain Snappy blocks: every
// Parquet reader decodes it.
type FastSnappy struct{}

// String names the codec.
func (FastSnappy) String() string { return "SNAPPY" }

// CompressionCodec is the codec's Parquet id.
func (FastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Encode compresses src as one Snappy block into dst (grown as needed).
func (FastSnappy) Encode(dst, src []byte) ([]byte, error) {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	} else {
		dst = dst[:n]
	}
	return s2.EncodeSnappy(dst, src), nil
}

// Decode decompresses one Snappy block.
func (FastSnappy) Decode(dst, src []byte) ([]byte, error) { return snappy.Decode(dst, src) }

// snappyPrefix decodes a Snappy block lazily: as a reader, it decodes
// only as far as it is read. The page scan reads a page's levels and the
// headers of its values, a few bytes at the start; decoding whole pages
// to find them cost a tenth of reading a DuckDB-written file (whose
// columns are all optional). No Snappy package decodes part of a block.
type snappyPrefix struct {
	src  []byte // the elements not decoded yet
	out  []byte // decoded so far
	size int    // the block's decoded length
	pos  int    // out[:pos] has been read
}

// reset starts decoding block.
func (s *snappyPrefix) reset(block []byte) error {
	size, n := binary.Uvarint(block)
	if n <= 0 || size > math.MaxInt32 {
		return errors.New("snappy: bad block header")
	}
	s.src, s.out, s.size, s.pos = block[n:], s.out[:0], int(size), 0
	return nil
}

// Read decodes until p can be filled or the block ends.
func (s *snappyPrefix) Read(p []byte) (int, error) {
	for len(s.out)-s.pos < len(p) && len(s.src) > 0 {
		if err := s.element(); err != nil {
			return 0, err
		}
	}
	if s.pos == len(s.out) {
		if len(p) == 0 {
			return 0, nil
		}
		if len(s.out) != s.size {
			return 0, fmt.Errorf("snappy: %d of %d bytes in the block: %w", len(s.out), s.size, io.ErrUnexpectedEOF)
		}
		return 0, io.EOF
	}
	n := copy(p, s.out[s.pos:])
	s.pos += n
	return n, nil
}

// errS2Repeat is a copy of offset 0: invalid in Snappy, S2's "repeat the
// last offset" code, which s2.Decode (parquet-go's SNAPPY decoder)
// accepts. No Snappy writer emits it: the page is refused.
var errS2Repeat = errors.New("snappy: a copy of offset 0 (S2's repeat code, not Snappy)")

// element decodes the next literal or copy.
func (s *snappyPrefix) element() error {
	src := s.src
	var length, offset, n int
	switch tag := src[0]; tag & 3 {
	case 0: // literal: its length - 1 in the tag, or in the 1-4 bytes after it
		length, n = int(tag>>2)+1, 1
		if tag>>2 >= 60 {
			k := int(tag>>2) - 59
			if len(src) < 1+k {
				return errors.New("snappy: truncated literal")
			}
			var b [4]byte
			copy(b[:], src[1:1+k])
			length, n = int(binary.LittleEndian.Uint32(b[:]))+1, 1+k
		}
		if length <= 0 || length > len(src)-n || length > s.size-len(s.out) {
			return errors.New("snappy: bad literal")
		}
		s.out = append(s.out, src[n:n+length]...)
		s.src = src[n+length:]
		return nil
	case 1:
		if len(src) < 2 {
			return errors.New("snappy: truncated copy")
		}
		length, offset, n = 4+int(tag>>2)&7, int(tag&0xe0)<<3|int(src[1]), 2
	case 2:
		if len(src) < 3 {
			return errors.New("snappy: truncated copy")
		}
		length, offset, n = 1+int(tag>>2), int(binary.LittleEndian.Uint16(src[1:])), 3
	case 3:
		if len(src) < 5 {
			return errors.New("snappy: truncated copy")
		}
		length, n = 1+int(tag>>2), 5
		offset = int(binary.LittleEndian.Uint32(src[1:]))
	}
	if offset == 0 {
		return errS2Repeat
	}
	if offset < 0 || offset > len(s.out) || length > s.size-len(s.out) {
		return errors.New("snappy: bad copy")
	}
	from := len(s.out) - offset
	for i := range length { // the source may overlap what it writes
		s.out = append(s.out, s.out[from+i])
	}
	s.src = src[n:]
	return nil
}
