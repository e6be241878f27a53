package rowio

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// bitPackedFile is a Parquet file built by hand: one row group of a
// REQUIRED INT32 id (row i holds i) and an OPTIONAL INT32 x, of
// Parquet's NULL logical type when null is set, each column one v1 data
// page. x's definition levels are BIT_PACKED, levels[i] that of row i,
// as the format's Encodings.md lays them out (from the most significant
// bit of each byte, no length before them), followed by a PLAIN 7 for
// each level 1; its chunk is compressed by codec (UNCOMPRESSED, ZSTD or
// LZ4_RAW).
func bitPackedFile(t *testing.T, levels []byte, null bool, codec format.CompressionCodec) []byte {
	t.Helper()
	n := int32(len(levels))
	file := []byte("PAR1")
	page := func(path string, data []byte, defs format.Encoding) format.ColumnChunk {
		raw := len(data)
		switch {
		case codec == format.Zstd && path == "x":
			e, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			data = e.EncodeAll(data, nil)
		case codec == format.Lz4Raw && path == "x": // one sequence of literals: an LZ4 block of data
			block := []byte{byte(min(len(data), 15) << 4)}
			for k := len(data) - 15; k >= 0; k -= 255 {
				block = append(block, byte(min(k, 255)))
				if k < 255 {
					break
				}
			}
			data = append(block, data...)
		}
		h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(raw), CompressedPageSize: int32(len(data))}
		h.DataPageHeader = thrift.New(format.DataPageHeader{NumValues: n, Encoding: format.Plain,
			DefinitionLevelEncoding: defs, RepetitionLevelEncoding: format.RLE})
		hdr, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(len(file))
		file = append(append(file, hdr...), data...)
		c := map[bool]format.CompressionCodec{true: codec, false: format.Uncompressed}[path == "x"]
		return format.ColumnChunk{FileOffset: at, MetaData: format.ColumnMetaData{Type: format.Int32,
			Encoding: []format.Encoding{format.Plain, defs}, PathInSchema: []string{path}, Codec: c, NumValues: int64(n),
			TotalUncompressedSize: int64(len(hdr) + raw), TotalCompressedSize: int64(len(hdr) + len(data)), DataPageOffset: at}}
	}
	var ids []byte
	for i := range n {
		ids = binary.LittleEndian.AppendUint32(ids, uint32(i))
	}
	id := page("id", ids, format.RLE)
	x := make([]byte, (len(levels)+7)/8)
	for i, l := range levels {
		x[i/8] |= l << (7 - i%8)
	}
	for _, l := range levels {
		if l == 1 {
			x = binary.LittleEndian.AppendUint32(x, 7)
		}
	}
	xc := page("x", x, format.BitPacked)
	xe := format.SchemaElement{Name: "x", Type: thrift.New(format.Int32), RepetitionType: thrift.New(format.Optional)}
	if null {
		xe.LogicalType = format.LogicalType{Value: &format.NullType{}}
	}
	md := format.FileMetaData{Version: 1, NumRows: int64(n), Schema: []format.SchemaElement{
		{Name: "schema", NumChildren: thrift.New(int32(2))},
		{Name: "id", Type: thrift.New(format.Int32), RepetitionType: thrift.New(format.Required)}, xe},
		RowGroups: []format.RowGroup{{Columns: []format.ColumnChunk{id, xc}, NumRows: int64(n),
			TotalByteSize: id.MetaData.TotalUncompressedSize + xc.MetaData.TotalUncompressedSize}}}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	file = binary.LittleEndian.AppendUint32(append(file, footer...), uint32(len(footer)))
	return append(file, "PAR1"...)
}

// TestBitPackedNullLevels: a v1 data page of a NULL-typed or all-null
// OPTIONAL column whose definition levels are BIT_PACKED (deprecated, but
// legal for levels) reads as nulls when every level says null, whatever
// the chunk's codec; parquet-go alone refused it (it reads a length
// before BIT_PACKED levels, which have none) and the page scan took every
// value of such a page for one that is not null. A value that is not
// null in a NULL-typed column is still refused, counted by the levels.
func TestBitPackedNullLevels(t *testing.T) {
	type read struct {
		ID int32  `parquet:"id"`
		X  *int32 `parquet:"x,optional"`
	}
	nulls := func(n int) []byte { return make([]byte, n) }
	oneValue := nulls(10)
	oneValue[6] = 1
	for _, tt := range []struct {
		name   string
		levels []byte
		null   bool
		codec  format.CompressionCodec
		want   string // the error's end; "": read, every x null but where its level is 1 (x = 7)
	}{
		{"NULL type, 3 rows", nulls(3), true, format.Uncompressed, ""},
		{"NULL type, 100 rows", nulls(100), true, format.Uncompressed, ""},
		{"NULL type, zstd", nulls(100), true, format.Zstd, ""},
		{"NULL type, LZ4_RAW", nulls(200), true, format.Lz4Raw, ""},
		{"all-null INT32", nulls(37), false, format.Uncompressed, ""},
		{"all-null INT32, zstd", nulls(37), false, format.Zstd, ""},
		{"NULL type, a value", oneValue, true, format.Uncompressed,
			"holds 1 value that is not null in a column of the NULL type (all null)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.parquet")
			if err := os.WriteFile(p, bitPackedFile(t, tt.levels, tt.null, tt.codec), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open[read](p, nil)
			var got []read
			if err == nil {
				got, err = r.ReadAll()
				r.Close()
			}
			if tt.want != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.want) || !strings.Contains(err.Error(), `column "x": page at offset `) {
					t.Fatalf("err = %v\nwant ...%s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.levels) {
				t.Fatalf("read %d rows, want %d", len(got), len(tt.levels))
			}
			for i, g := range got {
				if g.ID != int32(i) || g.X != nil {
					t.Fatalf("row %d: id %d, x %v; want id %d, x null", i, g.ID, g.X, i)
				}
			}
		})
	}
	if !bytes.Equal(rleLevels([]byte{0, 0, 0, 1, 1, 0}), []byte{3 << 1, 0, 2 << 1, 1, 1 << 1, 0}) {
		t.Fatalf("rleLevels: %v", rleLevels([]byte{0, 0, 0, 1, 1, 0}))
	}
}
