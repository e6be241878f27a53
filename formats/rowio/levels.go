package rowio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go expands each run of a page's repetition and definition
// levels (RLE/bit-packed hybrid) into a byte a level before it compares
// their number with the page's: a run header of 6 bytes can declare 2^31
// levels, and each such run allocated and filled that many bytes (a
// flipped bit in one took seconds and 400 MB; a few crafted runs exhaust
// memory, which no recover catches). Its delta decoders likewise allocate
// the value count a header declares. checkLevels walks the level runs and
// reads the delta headers first, and refuses a page that declares more
// levels or values than it has.

// checkLevels checks the levels of the data page with header h whose data
// (csize bytes, compressed with codec) starts at off, and the header of
// its values when they are delta-encoded (see checkDelta); nv is the
// page's value count, maxRep and maxDef the column's largest levels.
// With count, it returns how many of the page's values are not null, as
// its definition levels say (nv without them, or where a repeated
// column's levels are BIT_PACKED: not walked). A v1 page of a flat
// column whose definition levels are BIT_PACKED and all null leaves them
// in s.nullLevels, RLE-encoded (see bitPackedLevels); else that is nil.
func (s *pageScanner) checkLevels(codec format.CompressionCodec, h *format.PageHeader, off, csize, nv int64, maxRep, maxDef int, count bool) (present int64, err error) {
	present = nv
	s.nullLevels = nil
	if h.Type == format.DataPageV2 {
		v := &h.DataPageHeaderV2.V
		repLen, defLen := int64(v.RepetitionLevelsByteLength), int64(v.DefinitionLevelsByteLength)
		b := make([]byte, repLen+defLen) // at most csize: scanPages checked it
		if _, err := s.r.ReadAt(b, off); err != nil {
			return present, fmt.Errorf("levels: %v", err)
		}
		if err := walkLevels("repetition", b[:repLen], maxRep, nv); err != nil {
			return present, err
		}
		if err := walkLevels("definition", b[repLen:], maxDef, nv); err != nil {
			return present, err
		}
		if count && maxDef > 0 && defLen > 0 {
			present = countTop(b[repLen:], maxDef, nv)
		}
		if !deltaEncoded(v.Encoding) {
			return present, nil
		}
		if !compressed(h) {
			codec = format.Uncompressed
		}
		r, err := s.decompressing(codec, off+repLen+defLen, csize-repLen-defLen)
		if err != nil {
			return present, err
		}
		return present, checkDelta(r, v.Encoding, nv)
	}
	// A v1 page: each kind of levels (repetition first) is a 4-byte length
	// and the runs, at the start of the compressed data; the values follow.
	v := &h.DataPageHeader.V
	r, err := s.decompressing(codec, off, csize)
	if err != nil {
		return present, err
	}
	for _, lv := range []struct {
		kind string
		max  int
		enc  format.Encoding
	}{{"repetition", maxRep, v.RepetitionLevelEncoding}, {"definition", maxDef, v.DefinitionLevelEncoding}} {
		if lv.max == 0 {
			continue
		}
		if lv.enc == format.BitPacked && lv.kind == "definition" && maxRep == 0 && lv.max <= 255 {
			levels, err := bitPackedLevels(r, nv, lv.max, int64(h.UncompressedPageSize))
			if err != nil {
				return present, fmt.Errorf("definition levels: %w", err)
			}
			n := int64(bytes.Count(levels, []byte{byte(lv.max)}))
			if count {
				present = n
			}
			if n == 0 {
				s.nullLevels = rleLevels(levels)
			}
			continue
		}
		if lv.enc != format.RLE {
			return present, nil // BIT_PACKED repetition levels (deprecated): not walked
		}
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return present, fmt.Errorf("%s levels: %v", lv.kind, err)
		}
		size := int64(binary.LittleEndian.Uint32(n[:]))
		if size > int64(h.UncompressedPageSize) {
			return present, fmt.Errorf("%s levels of %d bytes in a page of %d", lv.kind, size, h.UncompressedPageSize)
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return present, fmt.Errorf("%s levels: %v", lv.kind, err)
		}
		if err := walkLevels(lv.kind, b, lv.max, nv); err != nil {
			return present, err
		}
		if count && lv.kind == "definition" {
			present = countTop(b, lv.max, nv)
		}
	}
	if deltaEncoded(v.Encoding) {
		return present, checkDelta(r, v.Encoding, nv)
	}
	return present, nil
}

// BIT_PACKED levels (deprecated, but legal for the levels of a v1 page)
// are, by the format's Encodings.md, nv values of the column's level
// width packed from the most significant bit of each byte, with no
// length before them (the RLE levels of a v1 page have one):
// (nv*width+7)/8 bytes. parquet-go v0.32.0 reads a 4-byte length before them too, so it
// refuses such a page ("decoding definition levels of data page v1:
// unexpected EOF", or "expected N values but got only 1"). A page whose
// levels all say null holds no value: openParquetFile has parquet-go read
// it as a v2 page of those levels, RLE-encoded (unpackLZ4).

// bitPackedLevels reads the nv BIT_PACKED levels (of maxLevel at most)
// at the start of r, in a page of usize bytes, one byte each.
func bitPackedLevels(r io.Reader, nv int64, maxLevel int, usize int64) ([]byte, error) {
	width := int64(bits.Len(uint(maxLevel)))
	size := (nv*width + 7) / 8
	if size > usize {
		return nil, fmt.Errorf("%d BIT_PACKED levels take %d bytes, in a page of %d", nv, size, usize)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	levels := make([]byte, nv)
	for i := range levels {
		var v int
		for k := int64(i) * width; k < int64(i+1)*width; k++ {
			v = v<<1 | int(b[k/8]>>(7-k%8)&1)
		}
		if v > maxLevel {
			return nil, fmt.Errorf("level %d past the column's %d", v, maxLevel)
		}
		levels[i] = byte(v)
	}
	return levels, nil
}

// rleLevels encodes levels (one byte each, 8 bits wide at most) as RLE
// runs of the RLE/bit-packed hybrid, as a v2 page holds them.
func rleLevels(levels []byte) []byte {
	var out []byte
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] {
			j++
		}
		out = binary.AppendUvarint(out, uint64(j-i)<<1)
		out = append(out, levels[i])
		i = j
	}
	return out
}

// deltaEncoded reports whether values of encoding e start with a
// DELTA_BINARY_PACKED header.
func deltaEncoded(e format.Encoding) bool {
	return e == format.DeltaBinaryPacked || e == format.DeltaLengthByteArray || e == format.DeltaByteArray
}

// checkDelta checks the DELTA_BINARY_PACKED headers at the start of a
// page's values (r): parquet-go allocates the value count a header
// declares, up to 2^31 values, before it decodes them. A DELTA_BYTE_ARRAY
// page holds two such runs (prefix lengths, then suffix lengths): the
// first is walked to find the second.
func checkDelta(r io.Reader, e format.Encoding, nv int64) error {
	br := bufio.NewReaderSize(r, 4096)
	if err := deltaRun(br, nv, e == format.DeltaByteArray); err != nil {
		return fmt.Errorf("%v values: %w", e, err)
	}
	if e == format.DeltaByteArray {
		if err := deltaRun(br, nv, false); err != nil {
			return fmt.Errorf("%v suffix lengths: %w", e, err)
		}
	}
	return nil
}

// deltaRun reads a DELTA_BINARY_PACKED header from br and checks that it
// declares at most nv values; with walk, it also reads past its blocks.
func deltaRun(br *bufio.Reader, nv int64, walk bool) error {
	var h [3]uint64 // block size, mini-blocks per block, total values
	for i := range h {
		u, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("header: %v", err)
		}
		h[i] = u
	}
	if _, err := binary.ReadVarint(br); err != nil { // the first value
		return fmt.Errorf("header: %v", err)
	}
	block, minis, total := h[0], h[1], h[2]
	if total > uint64(nv) {
		return fmt.Errorf("a header declares %d values in a page of %d", total, nv)
	}
	if !walk || total < 2 {
		return nil
	}
	if block == 0 || block%128 != 0 || block > 1<<20 || minis == 0 || block%minis != 0 || (block/minis)%32 != 0 {
		return fmt.Errorf("blocks of %d values in %d mini-blocks", block, minis)
	}
	per := int64(block / minis)
	widths := make([]byte, minis)
	for left := int64(total) - 1; left > 0; {
		if _, err := binary.ReadVarint(br); err != nil { // the block's smallest delta
			return fmt.Errorf("block: %v", err)
		}
		if _, err := io.ReadFull(br, widths); err != nil {
			return fmt.Errorf("block: %v", err)
		}
		for _, w := range widths {
			if left <= 0 {
				break
			}
			if w > 64 {
				return fmt.Errorf("a mini-block of %d-bit deltas", w)
			}
			if _, err := br.Discard(int(per * int64(w) / 8)); err != nil {
				return fmt.Errorf("mini-block: %v", err)
			}
			left -= per
		}
	}
	return nil
}

// decompressing returns a reader of the page data at off (n bytes),
// decompressed only as far as it is read. checkCodec has bounded what the
// data decompresses to.
func (s *pageScanner) decompressing(codec format.CompressionCodec, off, n int64) (io.Reader, error) {
	src := io.NewSectionReader(s.r, off, n)
	switch codec {
	case format.Uncompressed:
		return src, nil
	case format.Snappy:
		s.comp = slices.Grow(s.comp[:0], int(n))[:n]
		if _, err := src.ReadAt(s.comp, 0); err != nil {
			return nil, fmt.Errorf("snappy: %v", err)
		}
		if err := s.snappy.reset(s.comp); err != nil {
			return nil, err
		}
		return &s.snappy, nil
	case format.Zstd:
		if s.zstd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(s.lim.MaxPageBytes)))
			if err != nil {
				return nil, fmt.Errorf("zstd: %v", err)
			}
			s.zstd = d
		}
		if err := s.zstd.Reset(src); err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		return s.zstd, nil
	case format.Gzip:
		g, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("gzip: %v", err)
		}
		return g, nil
	case format.Brotli:
		return brotli.NewReader(src), nil
	case format.Lz4Raw:
		return s.decompressLZ4(off, n)
	}
	return nil, fmt.Errorf("%w: compression codec %s", ErrUnsupported, codec)
}

// walkLevels checks the RLE/bit-packed hybrid runs in b of levels up to
// max: they must hold the page's nv levels and no more, but for the
// padding of its last run. A bit-packed run holds groups of 8 levels,
// and writers pad the last one as they like (DuckDB to 256 levels, 32
// groups): the levels past nv are ignored (parquet-go drops them). So a
// run with levels must start before level nv, an RLE run must end by it,
// and each run's bytes must be there; the bytes of a bit-packed run bound
// what its padding costs. A page without levels (b empty: a v2 page of a
// column without nulls may leave them out) is accepted.
func walkLevels(kind string, b []byte, max int, nv int64) error {
	if max == 0 || len(b) == 0 {
		return nil
	}
	width := int64(bits.Len(uint(max)))
	var levels int64
	for i := 0; i < len(b); {
		u, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return fmt.Errorf("%s levels: bad run header at byte %d", kind, i)
		}
		i += k
		count := u >> 1
		if u&1 != 0 { // bit-packed: count groups of 8 levels, width bytes each
			if count > uint64(len(b)-i) || int64(count)*width > int64(len(b)-i) {
				return fmt.Errorf("%s levels: a bit-packed run of %d groups runs past its %d bytes", kind, count, len(b))
			}
			i += int(int64(count) * width)
			count *= 8
		} else {
			if count == 0 {
				continue // parquet-go reads no value after it, so neither do we
			}
			if count > uint64(nv) {
				return fmt.Errorf("%s levels: a run of %d in a page of %d values", kind, count, nv)
			}
			if i += int((width + 7) / 8); i > len(b) {
				return fmt.Errorf("%s levels: an RLE run's value runs past its %d bytes", kind, len(b))
			}
		}
		switch {
		case count == 0:
		case levels >= nv, u&1 == 0 && levels+int64(count) > nv: // levels past the page's: not its last run's padding
			return fmt.Errorf("%s levels: runs of %d levels in a page of %d values", kind, levels+int64(count), nv)
		}
		levels += int64(count)
	}
	if levels < nv {
		return fmt.Errorf("%s levels: %d levels in a page of %d values", kind, levels, nv)
	}
	return nil
}
