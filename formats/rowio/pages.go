package rowio

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/internal/plural"
)

// parquet-go sizes its buffers from page headers (compressed and
// uncompressed sizes, value counts) and from what compression frames
// declare. scanPages reads every page header of the columns to be read,
// without the page data, and refuses pages that would make it allocate
// more than the limits allow or that do not fit in their column chunk.
// It costs one small read per page (plus the block headers of zstd
// pages), no per-row work.

// readLeaves returns pf's leaf columns that a reader of schema read
// reads, in schema order.
func readLeaves(pf *parquet.File, read *parquet.Schema) []*parquet.Column {
	var cols []*parquet.Column
	var leaves func(c *parquet.Column)
	leaves = func(c *parquet.Column) {
		if c.Leaf() {
			if reads(read, c.Path()) {
				cols = append(cols, c)
			}
			return
		}
		for _, k := range c.Columns() {
			leaves(k)
		}
	}
	leaves(pf.Root())
	return cols
}

// With trustCRC, a page whose header carries a CRC has only its header
// checked (OpenOwnParquet). It returns the chunks parquet-go must read
// through a view (LZ4_RAW ones, and those with BIT_PACKED levels of
// nulls), for unpackLZ4.
func scanPages(r io.ReaderAt, pf *parquet.File, read *parquet.Schema, lim Limits, trustCRC bool) ([]lz4Chunk, error) {
	cols := readLeaves(pf, read)
	s := pageScanner{r: r, lim: lim, trustCRC: trustCRC}
	defer func() {
		if s.zstd != nil {
			s.zstd.Close()
		}
	}()
	rgs := pf.Metadata().RowGroups
	for i, rg := range rgs {
		var bytes int64
		s.rowGroup = i
		for _, c := range cols {
			if c.Index() >= len(rg.Columns) {
				return nil, corrupt("row group %d lacks column %q", i, strings.Join(c.Path(), "."))
			}
			where := fmt.Sprintf("row group %d column %q", i, strings.Join(c.Path(), "."))
			// parquet-go decodes every chunk of a column with the codec
			// of its first: another chunk's pages would be misread.
			if first, this := rgs[0].Columns[c.Index()].MetaData.Codec, rg.Columns[c.Index()].MetaData.Codec; this != first {
				return nil, fmt.Errorf("%w: %s: compression codec %s, the column's first chunk %s (parquet-go reads a column with one)",
					ErrUnsupported, where, this, first)
			}
			n, err := s.chunk(&rg.Columns[c.Index()].MetaData, c, rg.NumRows)
			if _, ok := errors.AsType[*ValueLimitError](err); ok {
				return nil, err // it says where
			}
			if err != nil {
				return nil, at(where, err)
			}
			if bytes += n; bytes > lim.MaxRowGroupBytes {
				return nil, fmt.Errorf("%w: row group %d pages hold %d uncompressed bytes (limit %d)", ErrLimit, i, bytes, lim.MaxRowGroupBytes)
			}
		}
		s.firstRow += rg.NumRows
	}
	return s.lz4Chunks, nil
}

// at places err, from checking part of a file, at where: the message
// reads "<kind>: <where>: <detail>" for every kind of problem.
func at(where string, err error) error {
	for _, kind := range []error{ErrLimit, ErrUnsupported} {
		if errors.Is(err, kind) {
			detail := strings.Replace(err.Error(), kind.Error()+": ", "", 1)
			return fmt.Errorf("%w: %s: %s", kind, where, detail)
		}
	}
	return corrupt("%s: %v", where, err)
}

// reads reports whether a reader of schema s may read the leaf at path:
// any leaf under one of s's top-level fields (nested names vary between
// writers: a list's element is "element", "item" or "array").
func reads(s *parquet.Schema, path []string) bool {
	if s == nil {
		return true
	}
	for _, f := range s.Fields() {
		if f.Name() == path[0] {
			return true
		}
	}
	return false
}

type pageScanner struct {
	r        io.ReaderAt
	lim      Limits
	trustCRC bool // skip the frames and levels of a page with a CRC
	buf      []byte
	// checkLevels's: a zstd decoder made on first use, and a Snappy
	// page with its decoder.
	zstd   *zstd.Decoder
	comp   []byte
	snappy snappyPrefix
	lz4    lz4Page
	// The levels of the last page checkLevels checked, when they are
	// BIT_PACKED and all null (RLE-encoded), else nil.
	nullLevels []byte
	// The chunks parquet-go reads through a view, with their pages:
	// LZ4_RAW ones, and those with a page of nullLevels.
	lz4Chunks []lz4Chunk
	// The row group being scanned, and the rows of those before it (for
	// a ValueLimitError).
	rowGroup int
	firstRow int64
}

// chunk scans one column chunk and returns its pages' uncompressed bytes.
func (s *pageScanner) chunk(md *format.ColumnMetaData, c *parquet.Column, rows int64) (int64, error) {
	start := chunkStart(md)
	end := start + md.TotalCompressedSize
	width := valueWidth(c)
	maxRep, maxDef := c.MaxRepetitionLevel(), c.MaxDefinitionLevel()
	flat := maxRep == 0
	vcap := s.lim.valueCap(c.Path())
	null := IsNullColumn(c.Type()) // all null: a value on its pages is damage (nullValuesError)
	lz := lz4Chunk{rowGroup: s.rowGroup, column: c.Index(), lz4: md.Codec == format.Lz4Raw}
	if lz.lz4 && s.trustCRC {
		// Splice copies an own file's chunks by the offsets the view
		// of unpackLZ4 moves; infohash writes no LZ4_RAW.
		return 0, fmt.Errorf("%w: LZ4_RAW compression in a file infohash wrote", ErrUnsupported)
	}
	rewrite := lz.lz4 // the chunk is read through the view
	var values, total int64
	for pos := start; pos < end; {
		h, n, err := s.header(pos, end)
		if err != nil {
			return 0, err
		}
		data, csize, usize := pos+n, int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
		switch {
		case csize < 0 || usize < 0:
			return 0, fmt.Errorf("page at offset %d: negative size", pos)
		case csize > end-data:
			return 0, fmt.Errorf("page at offset %d: %d bytes run past the end of the column chunk", pos, csize)
		case csize > s.lim.MaxPageBytes || usize > s.lim.MaxPageBytes:
			return 0, fmt.Errorf("%w: page at offset %d declares %d bytes (limit %d)", ErrLimit, pos, max(csize, usize), s.lim.MaxPageBytes)
		}
		total += n + usize
		nv, levels, isData, ok := pageValues(h)
		switch {
		case !ok:
			return 0, fmt.Errorf("page at offset %d: a %v page without its header", pos, h.Type)
		case nv < 0 || levels < 0 || levels > csize || levels > usize:
			return 0, fmt.Errorf("page at offset %d: bad value count or level sizes", pos)
		case nv > s.lim.MaxPageValues || nv*width > s.lim.MaxPageBytes:
			return 0, fmt.Errorf("%w: page at offset %d declares %d values (limit %d, %d bytes)", ErrLimit, pos, nv, s.lim.MaxPageValues, s.lim.MaxPageBytes)
		}
		lz.pages = append(lz.pages, lz4PageAt{pos: pos, hsize: n, levels: levels, h: h})
		first := values // of the page's rows, in the row group
		if isData && flat {
			stored := nv
			if maxDef == 0 && h.Type == format.DataPageV2 {
				// A REQUIRED column has no nulls: a v2 page that says it
				// has some holds fewer values than it claims rows.
				stored -= int64(h.DataPageHeaderV2.V.NumNulls)
			}
			if values += stored; values > rows {
				return 0, fmt.Errorf("pages hold more values than the row group's %d rows", rows)
			}
		}
		present := nv // values less nulls, as far as the header tells
		if h.Type == format.DataPageV2 {
			present -= int64(h.DataPageHeaderV2.V.NumNulls) // pageValues checked it
		}
		if vcap > 0 {
			if err := s.overValue(c.Path(), flat && isData, first, nv, present, usize, vcap); err != nil {
				return 0, err
			}
		}
		if null && isData && present > 0 && (maxDef == 0 || h.Type == format.DataPageV2) {
			// A REQUIRED column's every value is there; a v2 page's
			// header counts its nulls (its levels are counted below).
			return 0, nullValuesError(pos, present)
		}
		if s.trustCRC && h.CRC != 0 {
			pos = data + csize
			continue
		}
		if compressed(h) {
			if err := s.checkCodec(md.Codec, data+levels, csize-levels, usize-levels); err != nil {
				return 0, fmt.Errorf("page at offset %d: %w", pos, err)
			}
		}
		if isData && flat && maxDef == 0 && h.Type == format.DataPage {
			// A REQUIRED column: a v1 page's nulls are in its data.
			values -= s.v1Nulls(md.Codec, h, data, csize, c)
		}
		if isData && (maxRep > 0 || maxDef > 0 || deltaEncoded(dataEncoding(h))) {
			counted, err := s.checkLevels(md.Codec, h, data, csize, nv, maxRep, maxDef, vcap > 0 || null)
			if err != nil {
				return 0, fmt.Errorf("page at offset %d: %w", pos, err)
			}
			if null && counted > 0 {
				return 0, nullValuesError(pos, counted)
			}
			if s.nullLevels != nil && flat && !s.trustCRC { // BIT_PACKED, all null: read as a v2 page of them
				lz.pages[len(lz.pages)-1].nulls = s.nullLevels
				rewrite = true
			}
			if vcap > 0 && counted < present {
				if err := s.overValue(c.Path(), flat, first, nv, counted, usize, vcap); err != nil {
					return 0, err
				}
			}
		}
		pos = data + csize
	}
	if rewrite {
		s.lz4Chunks = append(s.lz4Chunks, lz)
	}
	switch {
	case flat && values < rows: // as dedup's decoder says it (colReader)
		return 0, fmt.Errorf("fewer values than rows: its pages hold %d values for %d rows", values, rows)
	case flat && values != rows:
		return 0, fmt.Errorf("pages hold %d values for %d rows", values, rows)
	}
	return total, nil
}

// nullValuesError is the error for the page at pos of a column of
// Parquet's NULL logical type that holds n values that are not null (its
// definition levels, or its header, say so). A NULL column is all null
// (pyarrow writes one so): parquet-go reads each such value as a zero of
// the field's type, a value nobody wrote. A writer does not make such a
// page: the file is damaged or crafted (a footer edit).
func nullValuesError(pos, n int64) error {
	return fmt.Errorf("page at offset %d holds %s in a column of the NULL type (all null)", pos,
		plural.Count(n, "value that is not null", "values that are not null"))
}

// header reads and decodes the page header at pos, checking its encoding
// first; it returns the header's size.
func (s *pageScanner) header(pos, end int64) (*format.PageHeader, int64, error) {
	n := min(4096, end-pos)
	for {
		if int64(cap(s.buf)) < n {
			s.buf = make([]byte, n)
		}
		b := s.buf[:n]
		if _, err := s.r.ReadAt(b, pos); err != nil {
			return nil, 0, fmt.Errorf("page header at offset %d: %v", pos, err)
		}
		shape, err := walkThrift(b)
		if err == nil && int64(shape.size) > s.lim.MaxPageHeader {
			return nil, 0, fmt.Errorf("%w: page header at offset %d is over %d bytes", ErrLimit, pos, s.lim.MaxPageHeader)
		}
		if err == nil {
			h := new(format.PageHeader)
			if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[:shape.size], h); err != nil {
				return nil, 0, fmt.Errorf("page header at offset %d: %v", pos, err)
			}
			return h, int64(shape.size), nil
		}
		switch {
		case err != errShort:
			return nil, 0, fmt.Errorf("page header at offset %d: %v", pos, err)
		case n == end-pos:
			return nil, 0, fmt.Errorf("page header at offset %d runs past the end of the column chunk", pos)
		case n >= s.lim.MaxPageHeader:
			return nil, 0, fmt.Errorf("%w: page header at offset %d is over %d bytes", ErrLimit, pos, s.lim.MaxPageHeader)
		}
		n = min(4*n, end-pos, s.lim.MaxPageHeader)
	}
}

// pageValues returns a page's value count, the bytes of uncompressed
// levels before its compressed data (v2 pages), whether it is a data page,
// and whether it is a page parquet-go reads at all.
func pageValues(h *format.PageHeader) (n, levels int64, data, ok bool) {
	switch {
	case h.Type == format.DataPage && h.DataPageHeader.Valid:
		return int64(h.DataPageHeader.V.NumValues), 0, true, true
	case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
		v := &h.DataPageHeaderV2.V
		if v.NumNulls < 0 || v.NumNulls > v.NumValues || v.NumRows < 0 || v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0 {
			return -1, 0, true, true
		}
		return int64(v.NumValues), int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength), true, true
	case h.Type == format.DictionaryPage && h.DictionaryPageHeader.Valid:
		return int64(h.DictionaryPageHeader.V.NumValues), 0, false, true
	}
	return 0, 0, false, false
}

// dataEncoding is the encoding of a data page's values.
func dataEncoding(h *format.PageHeader) format.Encoding {
	if h.Type == format.DataPageV2 {
		return h.DataPageHeaderV2.V.Encoding
	}
	return h.DataPageHeader.V.Encoding
}

func compressed(h *format.PageHeader) bool {
	if h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid {
		c := h.DataPageHeaderV2.V.IsCompressed
		return !c.Valid || c.V
	}
	return true
}

// valueWidth is the bytes one decoded value of c takes, levels included.
func valueWidth(c *parquet.Column) int64 {
	w := int64(4) // dictionary indexes, offsets
	switch t := c.Type(); t.Kind() {
	case parquet.FixedLenByteArray:
		w = max(w, int64(t.Length()))
	case parquet.Int96:
		w = 12
	case parquet.Int64, parquet.Double, parquet.ByteArray:
		w = 8
	}
	if c.MaxDefinitionLevel() > 0 || c.MaxRepetitionLevel() > 0 {
		w += 2
	}
	return w
}
