package rowio

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"sync"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// lz4Chunk is a column chunk scanPages scanned that parquet-go reads
// through the view: its row group, its column's index and its pages, in
// order; an LZ4_RAW one (lz4), or one with a page of nulls whose levels
// are BIT_PACKED.
type lz4Chunk struct {
	rowGroup, column int
	lz4              bool
	pages            []lz4PageAt
}

// lz4PageAt is a page of an lz4Chunk: its header (of hsize bytes) at pos,
// and the uncompressed levels of a v2 page, before its compressed data.
// nulls are the RLE-encoded definition levels of a v1 page whose own are
// BIT_PACKED and all null (bitPackedLevels): the view holds a v2 page of
// them, without values, in its place.
type lz4PageAt struct {
	pos, hsize, levels int64
	h                  *format.PageHeader
	nulls              []byte
}

// maxUnpacked is how many decompressed pages a view keeps at once: one
// per chunk being read (parquet-go reads a page's header and its data
// in two or three reads), for the columns of a row group read together.
const maxUnpacked = 16

// unpacked is a Parquet file as parquet-go reads it once its LZ4_RAW
// chunks are rewritten: the file's bytes up to dataEnd (the magic and
// the column chunks), then each rewritten chunk (segs: each page's header
// with the page's uncompressed size for its compressed one and no CRC,
// and the page decompressed, when parquet-go reads it), then tail (the
// footer with the rewritten chunks' offsets, sizes and codec
// UNCOMPRESSED, its length and the magic).
type unpacked struct {
	r       io.ReaderAt
	dataEnd int64
	segs    []segment
	tailAt  int64
	tail    []byte

	mu   sync.Mutex
	done []decodedPage // pages decompressed and not yet read to their end
}

// segment is a run of bytes of the view, n bytes at at: a page header
// (hdr; or a whole page of nulls, nullsPage), or bytes of r at src, as
// they are (csize 0) or an LZ4_RAW page of csize bytes (levels first)
// that decompresses to n.
type segment struct {
	at, n        int64
	hdr          []byte
	src, csize   int64
	levels, page int64 // page: the page header's offset in r
	crc          int32
}

type decodedPage struct {
	seg int
	b   []byte
}

// unpackLZ4 returns r (of data up to dataEnd, whose footer is md) with
// the chunks chunks after the data, LZ4_RAW ones decompressed and pages
// of nulls with BIT_PACKED levels rewritten (nullsPage), and md changed
// to find them there, and the size of the result. md is changed.
func unpackLZ4(r io.ReaderAt, dataEnd int64, md *format.FileMetaData, chunks []lz4Chunk) (io.ReaderAt, int64, error) {
	v := &unpacked{r: r, dataEnd: dataEnd}
	at := dataEnd
	add := func(s segment) {
		s.at, at = at, at+s.n
		v.segs = append(v.segs, s)
	}
	for _, ch := range chunks {
		cc := &md.RowGroups[ch.rowGroup].Columns[ch.column]
		m := &cc.MetaData
		start, dataPage := at, int64(-1)
		usize := m.TotalUncompressedSize
		for _, p := range ch.pages {
			if dataPage < 0 && p.pos >= m.DataPageOffset {
				dataPage = at
			}
			csize := int64(p.h.CompressedPageSize)
			if p.nulls != nil {
				b, err := nullsPage(p)
				if err != nil {
					return nil, 0, err
				}
				add(segment{n: int64(len(b)), hdr: b, page: p.pos})
				usize += int64(len(b)) - p.hsize - int64(p.h.UncompressedPageSize)
				continue
			}
			if !ch.lz4 || !compressed(p.h) { // a page as it is (of LZ4_RAW: a v2 page stored uncompressed)
				add(segment{n: p.hsize + csize, src: p.pos})
				continue
			}
			h := *p.h
			h.CompressedPageSize, h.CRC = h.UncompressedPageSize, 0
			if h.Type == format.DataPageV2 {
				h.DataPageHeaderV2.V.IsCompressed = thrift.New(false)
			}
			hdr, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
			if err != nil {
				return nil, 0, corrupt("page header at offset %d: %v", p.pos, err)
			}
			add(segment{n: int64(len(hdr)), hdr: hdr, page: p.pos})
			add(segment{n: int64(h.UncompressedPageSize), src: p.pos + p.hsize, csize: csize,
				levels: p.levels, page: p.pos, crc: p.h.CRC})
		}
		if dataPage < 0 {
			dataPage = at
		}
		if m.DictionaryPageOffset != 0 {
			m.DictionaryPageOffset = start
		}
		m.DataPageOffset, m.TotalCompressedSize, m.TotalUncompressedSize = dataPage, at-start, usize
		if ch.lz4 {
			m.Codec, m.TotalUncompressedSize = format.Uncompressed, at-start
		}
		// The page index locates the pages as they were.
		cc.OffsetIndexOffset, cc.OffsetIndexLength, cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0, 0, 0
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return nil, 0, corrupt("footer: %v", err)
	}
	v.tailAt = at
	v.tail = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	v.tail = append(v.tail, "PAR1"...)
	return v, at + int64(len(v.tail)), nil
}

// nullsPage is the v2 page (header and levels, no values, stored
// uncompressed) that stands for p, a v1 data page whose BIT_PACKED
// definition levels all say null (p.nulls: them, RLE-encoded), as
// parquet-go reads one.
func nullsPage(p lz4PageAt) ([]byte, error) {
	nv := p.h.DataPageHeader.V.NumValues
	h := format.PageHeader{Type: format.DataPageV2, UncompressedPageSize: int32(len(p.nulls)),
		CompressedPageSize: int32(len(p.nulls))}
	h.DataPageHeaderV2 = thrift.New(format.DataPageHeaderV2{NumValues: nv, NumNulls: nv, NumRows: nv,
		Encoding: format.Plain, DefinitionLevelsByteLength: int32(len(p.nulls)), IsCompressed: thrift.New(false)})
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		return nil, corrupt("page header at offset %d: %v", p.pos, err)
	}
	return append(hdr, p.nulls...), nil
}

// fileOffset is the offset in the file of the page whose header is at
// offset off of src, what parquet-go read it from: the file, or a view of
// it (openParquetFile). A view places the LZ4_RAW pages past the file's
// data, at offsets the file does not have; an error naming such a page
// names it where it is in the file.
func fileOffset(src io.ReaderAt, off int64) int64 {
	v, ok := src.(*unpacked)
	if !ok || off < v.dataEnd || off >= v.tailAt {
		return off
	}
	i := sort.Search(len(v.segs), func(i int) bool { return v.segs[i].at+v.segs[i].n > off })
	s := &v.segs[i]
	if s.hdr == nil && s.csize == 0 { // a page kept as it is
		return s.src + off - s.at
	}
	return s.page // a header rewritten (and its data), or a page of nulls
}

func (v *unpacked) ReadAt(p []byte, off int64) (n int, err error) {
	if off < v.dataEnd {
		k := int(min(int64(len(p)), v.dataEnd-off))
		if n, err = v.r.ReadAt(p[:k], off); n < k || n == len(p) {
			return n, err
		}
		off += int64(n)
	}
	for n < len(p) {
		if off >= v.tailAt {
			at := off - v.tailAt
			if at >= int64(len(v.tail)) {
				return n, io.EOF
			}
			if n += copy(p[n:], v.tail[at:]); n < len(p) {
				return n, io.EOF
			}
			return n, nil
		}
		i := sort.Search(len(v.segs), func(i int) bool { return v.segs[i].at+v.segs[i].n > off })
		k, err := v.readSegment(i, p[n:], off-v.segs[i].at)
		n, off = n+k, off+int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// readSegment reads segment i from rel bytes into it into p, as far as
// either goes.
func (v *unpacked) readSegment(i int, p []byte, rel int64) (int, error) {
	s := &v.segs[i]
	want := min(int64(len(p)), s.n-rel)
	switch {
	case s.hdr != nil:
		return copy(p[:want], s.hdr[rel:]), nil
	case s.csize == 0:
		k, err := v.r.ReadAt(p[:want], s.src+rel)
		if int64(k) == want {
			err = nil
		}
		return k, err
	}
	b, err := v.decoded(i)
	if err != nil {
		return 0, err
	}
	k := copy(p[:want], b[rel:])
	if rel+int64(k) == s.n { // read to its end: parquet-go is done with it
		v.mu.Lock()
		for j, d := range v.done {
			if d.seg == i {
				v.done = append(v.done[:j], v.done[j+1:]...)
				break
			}
		}
		v.mu.Unlock()
	}
	return k, nil
}

// decoded returns the LZ4_RAW page of segment i, decompressed.
func (v *unpacked) decoded(i int) ([]byte, error) {
	v.mu.Lock()
	for _, d := range v.done {
		if d.seg == i {
			v.mu.Unlock()
			return d.b, nil
		}
	}
	v.mu.Unlock()
	s := &v.segs[i]
	src := make([]byte, s.csize)
	if _, err := v.r.ReadAt(src, s.src); err != nil {
		return nil, fmt.Errorf("LZ4_RAW page at offset %d: %w", s.page, err)
	}
	if s.crc != 0 && crc32.ChecksumIEEE(src) != uint32(s.crc) {
		return nil, fmt.Errorf("LZ4_RAW page at offset %d: its data does not match its CRC", s.page)
	}
	b := make([]byte, s.n)
	copy(b, src[:s.levels])
	if err := unLZ4(b[s.levels:], src[s.levels:]); err != nil {
		return nil, fmt.Errorf("page at offset %d: %w", s.page, err)
	}
	v.mu.Lock()
	if len(v.done) >= maxUnpacked {
		v.done = v.done[1:]
	}
	v.done = append(v.done, decodedPage{seg: i, b: b})
	v.mu.Unlock()
	return b, nil
}
