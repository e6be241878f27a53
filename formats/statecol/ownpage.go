// The layout infohash's writer gives a required column's chunk: one
// uncompressed data page with a CRC, which the fast readers (info_hash
// in place, delta-packed INT64s) read without the page reader.

package statecol

import (
	"hash/crc32"

	"github.com/parquet-go/parquet-go/format"
)

// ownChunk returns the metadata of required column name in row group i
// when its chunk may be one uncompressed, dictionary-free page of values
// of type typ, rows of them; ok is false otherwise.
func (f *File) ownChunk(i int, name string, typ format.Type, rows int64) (_ *format.ColumnMetaData, ok bool) {
	l, ok := f.pf.Schema().Lookup(name)
	rgs := f.pf.Metadata().RowGroups
	if !ok || i >= len(rgs) || l.ColumnIndex >= len(rgs[i].Columns) || l.MaxDefinitionLevel != 0 {
		return nil, false
	}
	m := &rgs[i].Columns[l.ColumnIndex].MetaData
	if m.Type != typ || m.Codec != format.Uncompressed || m.DictionaryPageOffset != 0 || m.NumValues != rows ||
		m.DataPageOffset <= 0 || m.TotalCompressedSize <= 0 {
		return nil, false
	}
	return m, true
}

// ownPage reports whether h heads a v1 data page of rows values in
// encoding enc, uncompressed, whose body of size bytes carries a CRC.
func ownPage(h *format.PageHeader, enc format.Encoding, rows int64, size int) bool {
	d := h.DataPageHeader
	return h.Type == format.DataPage && d.Valid && d.V.Encoding == enc && int64(d.V.NumValues) == rows &&
		int(h.CompressedPageSize) == size && int(h.UncompressedPageSize) == size && h.CRC != 0
}

// crcHolds reports whether body matches its page header's CRC.
func crcHolds(h *format.PageHeader, body []byte) bool {
	return crc32.ChecksumIEEE(body) == uint32(h.CRC)
}
