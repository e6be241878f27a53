package rowio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// bitPackedDictFile is a Parquet file built by hand: one row group of 32
// rows, a REQUIRED INT32 id and an OPTIONAL INT32 x whose chunk is a
// dictionary of 2 values (PLAIN 7 and 9) and one v1 data page,
// RLE_DICTIONARY with BIT_PACKED definition levels, of data (levels,
// then indexes); it returns the file and the data page's offset.
func bitPackedDictFile(t *testing.T, data []byte) ([]byte, int64) {
	t.Helper()
	const n = 32
	file := []byte("PAR1")
	page := func(h format.PageHeader, data []byte) int64 {
		h.UncompressedPageSize, h.CompressedPageSize = int32(len(data)), int32(len(data))
		hdr, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(len(file))
		file = append(append(file, hdr...), data...)
		return at
	}
	var ids []byte
	for i := range n {
		ids = binary.LittleEndian.AppendUint32(ids, uint32(i))
	}
	idAt := page(format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{
		NumValues: n, Encoding: format.Plain, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})}, ids)
	dictAt := page(format.PageHeader{Type: format.DictionaryPage, DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{
		NumValues: 2, Encoding: format.Plain})}, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 7), 9))
	dataAt := page(format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{
		NumValues: n, Encoding: format.RLEDictionary, DefinitionLevelEncoding: format.BitPacked,
		RepetitionLevelEncoding: format.RLE})}, data)
	end := int64(len(file))
	id := format.ColumnChunk{FileOffset: idAt, MetaData: format.ColumnMetaData{Type: format.Int32,
		Encoding: []format.Encoding{format.Plain, format.RLE}, PathInSchema: []string{"id"}, Codec: format.Uncompressed,
		NumValues: n, TotalUncompressedSize: dictAt - idAt, TotalCompressedSize: dictAt - idAt, DataPageOffset: idAt}}
	x := format.ColumnChunk{FileOffset: dictAt, MetaData: format.ColumnMetaData{Type: format.Int32,
		Encoding:     []format.Encoding{format.Plain, format.RLEDictionary, format.BitPacked},
		PathInSchema: []string{"x"}, Codec: format.Uncompressed, NumValues: n, TotalUncompressedSize: end - dictAt,
		TotalCompressedSize: end - dictAt, DataPageOffset: dataAt, DictionaryPageOffset: dictAt}}
	md := format.FileMetaData{Version: 1, NumRows: n, Schema: []format.SchemaElement{
		{Name: "schema", NumChildren: thrift.New(int32(2))},
		{Name: "id", Type: thrift.New(format.Int32), RepetitionType: thrift.New(format.Required)},
		{Name: "x", Type: thrift.New(format.Int32), RepetitionType: thrift.New(format.Optional)}},
		RowGroups: []format.RowGroup{{Columns: []format.ColumnChunk{id, x}, NumRows: n, TotalByteSize: end - idAt}}}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	file = binary.LittleEndian.AppendUint32(append(file, footer...), uint32(len(footer)))
	return append(file, "PAR1"...), dataAt
}

// TestDictIndexBitPackedLevels: the dictionary-index check walks a v1
// page whose definition levels are BIT_PACKED as the format lays them out
// (bitPackedLevels: no length before them) and checks as many indexes as
// they count values. parquet-go reads a 4-byte length before such levels,
// so each page below is crafted to read both ways: its first 4 bytes,
// 04 00 00 00, are 32 levels of which one (row 5) is not null, and to
// parquet-go the length of 4 bytes of levels; the indexes that follow
// each reading run past the dictionary by parquet-go's, so it panics.
// The check names the page when the index the format's layout gives is
// past the dictionary, and only then: parquet-go's panic stands when it
// is not, or when only the bytes past the values the levels count are.
func TestDictIndexBitPackedLevels(t *testing.T) {
	type row struct {
		ID int32  `parquet:"id"`
		X  *int32 `parquet:"x,optional"`
	}
	levels := []byte{0x04, 0, 0, 0}
	const panicked = "the decoder failed: index out of bounds" // parquet-go's panic, no page named
	for _, tt := range []struct {
		name string
		data []byte // after levels: the format's indexes (width, runs); to parquet-go, levels then indexes
		want string // after "corrupt Parquet: "; %d: the page's offset
	}{
		// The format's: width 8, a run of 1 of index 5. parquet-go's: levels
		// 08 02 05 00 (4 values), width 8, a run of 4 of index 5.
		{"index past the dictionary", []byte{8, 1 << 1, 5, 0, 8, 4 << 1, 5},
			`row group 0 column "x": page at offset %d: RLE_DICTIONARY index 5 (bit width 8) past the dictionary's 2 values`},
		// The format's: index 1. parquet-go's: levels 08 02 01 00 (3
		// values), a run of 3 of index 5.
		{"index in the dictionary", []byte{8, 1 << 1, 1, 0, 8, 3 << 1, 5}, panicked},
		// The format's: index 1, then a run of index 5 past the one value
		// the levels count. parquet-go's: levels 08 02 01 02 (4 values),
		// width 5, a run of 4 of index 31.
		{"index past the values", []byte{8, 1 << 1, 1, 1 << 1, 5, 4 << 1, 31}, panicked},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, off := bitPackedDictFile(t, append(append([]byte(nil), levels...), tt.data...))
			p := filepath.Join(t.TempDir(), "in.parquet")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			err := readAllFile[row](p)
			want := p + ": corrupt Parquet: " + tt.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, off)
			}
			if err == nil || err.Error() != want || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
}
