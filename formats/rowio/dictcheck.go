package rowio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go looks a dictionary-encoded page's indexes up in its
// dictionary without checking them: an index past the dictionary (a
// broken bit width, a flipped bit) panics with "index out of range",
// which says neither the column nor the page. Checking every index
// before reading would decode each such page twice; instead, once the
// decoder has panicked, dictIndexError looks for the page that made it.

// dictIndexError returns a CorruptError naming the row group, column
// and page (by offset in the file: fileOffset) of the first data page of
// pf (read from r), in a column a reader of schema read reads, holding a
// dictionary index past its chunk's dictionary; nil if there is none.
func dictIndexError(r io.ReaderAt, pf *parquet.File, read *parquet.Schema) (err error) {
	s := pageScanner{r: r, lim: DefaultLimits()}
	defer func() {
		if s.zstd != nil {
			s.zstd.Close()
		}
		if p := recover(); p != nil { // no page found: the caller keeps its error
			_ = PanicError(p, "Parquet") // which under FailOnOwnPanics panics again at a panic of ours
			err = nil
		}
	}()
	cols := readLeaves(pf, read)
	for i, rg := range pf.Metadata().RowGroups {
		for _, c := range cols {
			if c.Index() >= len(rg.Columns) {
				continue
			}
			if where, err := s.dictIndexes(&rg.Columns[c.Index()].MetaData, c); err != nil {
				return corrupt("row group %d column %q: page at offset %d: %v", i, strings.Join(c.Path(), "."),
					fileOffset(r, where), err)
			}
		}
	}
	return nil
}

// dictIndexes walks one column chunk's pages and checks the indexes of
// its dictionary-encoded data pages against its dictionary's size; it
// returns the offset of the first page with one past it. A page it
// cannot read is skipped: scanPages checked what it could.
func (s *pageScanner) dictIndexes(md *format.ColumnMetaData, c *parquet.Column) (int64, error) {
	start := chunkStart(md)
	end := start + md.TotalCompressedSize
	maxRep, maxDef := c.MaxRepetitionLevel(), c.MaxDefinitionLevel()
	dict := int64(-1) // none yet
	for pos := start; pos < end; {
		h, n, err := s.header(pos, end)
		if err != nil {
			return 0, nil
		}
		data, csize := pos+n, int64(h.CompressedPageSize)
		if csize < 0 || csize > end-data {
			return 0, nil
		}
		nv, _, isData, ok := pageValues(h)
		switch {
		case !ok:
			return 0, nil
		case h.Type == format.DictionaryPage:
			dict = nv
		case isData && dict >= 0 && (dataEncoding(h) == format.RLEDictionary || dataEncoding(h) == format.PlainDictionary):
			if err := s.pageIndexes(md.Codec, h, data, csize, nv, dict, maxRep, maxDef); err != nil {
				return pos, err
			}
		}
		pos = data + csize
	}
	return 0, nil
}

// pageIndexes checks the indexes of one dictionary-encoded data page (see
// checkLevels for the layout of its levels) against a dictionary of dict
// values. Only an index past it is an error: levels or runs it cannot
// read end the check of the page.
func (s *pageScanner) pageIndexes(codec format.CompressionCodec, h *format.PageHeader, off, csize, nv, dict int64, maxRep, maxDef int) error {
	values := nv // the page's non-null values: nv less the nulls
	var r io.Reader
	if h.Type == format.DataPageV2 {
		v := &h.DataPageHeaderV2.V
		skip := int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
		values = int64(v.NumValues) - int64(v.NumNulls)
		if !compressed(h) {
			codec = format.Uncompressed
		}
		var err error
		if r, err = s.decompressing(codec, off+skip, csize-skip); err != nil {
			return nil
		}
	} else {
		v := &h.DataPageHeader.V
		var err error
		if r, err = s.decompressing(codec, off, csize); err != nil {
			return nil
		}
		for _, lv := range []struct {
			def bool
			max int
			enc format.Encoding
		}{{false, maxRep, v.RepetitionLevelEncoding}, {true, maxDef, v.DefinitionLevelEncoding}} {
			if lv.max == 0 {
				continue
			}
			if lv.enc == format.BitPacked && lv.def && maxRep == 0 && lv.max <= 255 { // as checkLevels reads them
				levels, err := bitPackedLevels(r, nv, lv.max, int64(h.UncompressedPageSize))
				if err != nil {
					return nil
				}
				values = int64(bytes.Count(levels, []byte{byte(lv.max)}))
				continue
			}
			if lv.enc != format.RLE {
				return nil // BIT_PACKED repetition levels (deprecated): not walked
			}
			var n [4]byte
			if _, err := io.ReadFull(r, n[:]); err != nil {
				return nil
			}
			size := int64(binary.LittleEndian.Uint32(n[:]))
			if size > int64(h.UncompressedPageSize) {
				return nil
			}
			b := make([]byte, size)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil
			}
			if lv.def {
				values = countTop(b, maxDef, nv)
			}
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(h.UncompressedPageSize)))
	if err != nil || len(b) == 0 || b[0] > 32 {
		return nil // parquet-go reports these itself
	}
	width := int(b[0])
	var bad uint64
	hybridRuns(b[1:], width, values, func(index uint64, _ int64) bool {
		if index >= uint64(dict) {
			bad = index + 1
			return false
		}
		return true
	})
	if bad > 0 {
		return fmt.Errorf("%v index %d (bit width %d) past the dictionary's %d values", dataEncoding(h), bad-1, width, dict)
	}
	return nil
}

// hybridRuns calls each for the first n values of the RLE/bit-packed
// hybrid runs in b of width-bit values: once for an RLE run, with its
// length, and once for each value of a bit-packed one (count 1). It
// stops where each returns false, or b ends.
func hybridRuns(b []byte, width int, n int64, each func(v uint64, count int64) bool) {
	for i := 0; i < len(b) && n > 0; {
		u, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return
		}
		i += k
		count := int64(u >> 1)
		if u == 0 {
			continue // no value follows an empty RLE run, as parquet-go reads it (walkLevels)
		}
		if u&1 == 0 { // RLE: the value in (width+7)/8 bytes, little-endian
			w := (width + 7) / 8
			if i+w > len(b) {
				return
			}
			var v uint64
			for j := w - 1; j >= 0; j-- {
				v = v<<8 | uint64(b[i+j])
			}
			i += w
			if count = min(count, n); count > 0 && !each(v, count) {
				return
			}
			n -= count
			continue
		}
		group := b[i:min(len(b), i+int(min(count, int64(len(b)))*int64(width)))] // count groups of 8 values
		i += len(group)
		for bit := 0; bit+width <= 8*len(group) && n > 0; bit += width {
			var v uint64
			for j := range width {
				if group[(bit+j)/8]>>((bit+j)%8)&1 != 0 {
					v |= 1 << j
				}
			}
			if n--; !each(v, 1) {
				return
			}
		}
	}
}
