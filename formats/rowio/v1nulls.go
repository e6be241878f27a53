package rowio

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A v2 data page counts its nulls in its header, so scanPages tells a
// REQUIRED column's nulls there for free. A v1 page does not: a writer
// that gives a column declared REQUIRED nulls puts definition levels (a
// 4-byte length and their RLE/bit-packed runs) before the values, and
// parquet-go, which expects none in a REQUIRED column, reads them as
// values: a decoding error ("invalid number of mini block"), or values
// shifted. v1Nulls finds such levels, so that the page is said as the v2
// one is: fewer values than rows.

// v1Nulls returns how many nulls the definition levels leading the v1
// data page with header h (data at off, csize bytes compressed with
// codec) of column c, flat and REQUIRED, hold: 0 when its data does not
// start with levels. A PLAIN page of a fixed-width type whose size is
// its values' (every honest one) costs nothing; any other page, the
// decompression of its first bytes (as a v1 page of an OPTIONAL column
// costs, checkLevels). Only data that reads as levels of exactly the
// page's values, some null, followed by what the others take, is taken
// for levels.
func (s *pageScanner) v1Nulls(codec format.CompressionCodec, h *format.PageHeader, off, csize int64, c *parquet.Column) int64 {
	v := &h.DataPageHeader.V
	nv, usize := int64(v.NumValues), int64(h.UncompressedPageSize)
	width, fixed := plainWidth(c.Type())
	if v.Encoding == format.Plain && fixed && usize == nv*width || nv <= 0 || usize <= 4 {
		return 0
	}
	r, err := s.decompressing(codec, off, csize)
	if err != nil {
		return 0 // checkCodec says what is wrong with it
	}
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return 0
	}
	size := int64(binary.LittleEndian.Uint32(n[:]))
	// Levels of width 1 take at most 2 bytes a level (a run of one).
	if size == 0 || size > usize-4 || size > 2*nv+8 {
		return 0
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil || walkLevels("definition", b, 1, nv) != nil {
		return 0
	}
	ones, other := int64(0), false
	hybridRuns(b, 1, nv, func(l uint64, count int64) bool {
		switch l {
		case 1:
			ones += count
		case 0:
		default:
			other = true
		}
		return !other
	})
	if other || ones == nv || !valuesFit(bufio.NewReaderSize(r, 4096), v.Encoding, c.Type(), ones, usize-4-size) {
		return 0
	}
	return nv - ones
}

// plainWidth is the bytes a PLAIN value of type t takes, for the types
// whose values all take the same (fixed).
func plainWidth(t parquet.Type) (width int64, fixed bool) {
	switch t.Kind() {
	case parquet.Int32, parquet.Float:
		return 4, true
	case parquet.Int64, parquet.Double:
		return 8, true
	case parquet.Int96:
		return 12, true
	case parquet.FixedLenByteArray:
		return int64(t.Length()), true
	}
	return 0, false
}

// valuesFit reports whether the rest bytes of r, what follows the levels,
// can be n values of type t in encoding e, as far as their start tells.
func valuesFit(r *bufio.Reader, e format.Encoding, t parquet.Type, n, rest int64) bool {
	k := t.Kind()
	if w, fixed := plainWidth(t); fixed && e == format.Plain {
		return rest == n*w
	}
	switch {
	case e == format.Plain && k == parquet.ByteArray: // n length-prefixed values, exactly
		for range n {
			var l [4]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return false
			}
			size := int64(binary.LittleEndian.Uint32(l[:]))
			if rest -= 4 + size; rest < 0 {
				return false
			}
			if _, err := r.Discard(int(size)); err != nil {
				return false
			}
		}
		return rest == 0
	case e == format.Plain && k == parquet.Boolean:
		return rest == (n+7)/8
	case e == format.RLEDictionary || e == format.PlainDictionary: // the indexes' bit width
		w, err := r.ReadByte()
		return err == nil && w <= 32
	case deltaEncoded(e): // a DELTA_BINARY_PACKED header of the n values (prefix lengths)
		var hd [3]uint64
		for i := range hd {
			u, err := binary.ReadUvarint(r)
			if err != nil {
				return false
			}
			hd[i] = u
		}
		return hd[2] == uint64(n)
	}
	return true
}
