package rowio

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/format"
)

// hugeRun is an RLE run header declaring 2^28 levels (then its value
// byte): parquet-go would fill 256 MB with it.
var hugeRun = append(binary.AppendUvarint(nil, 1<<29), 1)

func TestWalkLevels(t *testing.T) {
	run := func(count uint64, v byte) []byte { return append(binary.AppendUvarint(nil, count<<1), v) }
	packed := func(groups uint64, width int) []byte {
		return append(binary.AppendUvarint(nil, groups<<1|1), make([]byte, int(groups)*width)...)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name string
		runs []byte
		max  int
		nv   int64
		want string // "" for accepted
	}{
		{"one run", run(100, 1), 1, 100, ""},
		{"runs and packed groups", cat(run(40, 1), packed(2, 1), run(44, 0)), 1, 100, ""},
		{"padded last group", cat(run(95, 1), packed(1, 1)), 1, 100, ""},
		{"width 2", cat(run(10, 3), packed(3, 2)), 3, 34, ""},
		{"no levels", nil, 1, 0, ""},
		{"one run too many", run(101, 1), 1, 100, "a run of 101 in a page of 100 values"},
		{"runs add up past the page", cat(run(60, 1), run(60, 0)), 1, 100, "runs of 120 levels in a page of 100 values"},
		{"huge run", hugeRun, 1, 100, "a run of 268435456"},
		{"packed run past its bytes", binary.AppendUvarint(nil, 1<<40|1), 1, 100, "runs past its"},
		{"bad header", []byte{0xff, 0xff}, 1, 100, "bad run header"},
		// Writers pad the last bit-packed run as they like: DuckDB writes
		// 32 groups (256 levels) for a page of 50 values.
		{"last run padded to 256", packed(32, 1), 1, 50, ""},
		{"runs then a padded run", cat(run(40, 1), packed(32, 1)), 1, 50, ""},
		{"padded run then empty runs", cat(packed(32, 1), []byte{0, 1}), 1, 50, ""},
		// parquet-go reads no value after an empty RLE run: the next byte
		// is a run header (here of 24 levels, past the page's).
		{"empty RLE run then a byte", cat(run(95, 1), run(0, '0'), packed(1, 1)), 1, 100, "runs of 119 levels in a page of 100"},
		{"padded run of width 2", packed(32, 2), 3, 1, ""},
		{"a run after the page's levels", cat(packed(32, 1), run(1, 1)), 1, 50, "runs of 257 levels in a page of 50"},
		{"a packed run after the page's levels", cat(run(50, 1), packed(1, 1)), 1, 50, "runs of 58 levels in a page of 50"},
		{"packed runs past the page", cat(packed(8, 1), packed(8, 1)), 1, 100, ""},
		{"packed runs past the page, then more", cat(packed(16, 1), packed(1, 1)), 1, 100, "runs of 136 levels in a page of 100"},
		{"too few levels", run(40, 1), 1, 50, "40 levels in a page of 50"},
		{"truncated RLE run", binary.AppendUvarint(nil, 50<<1), 1, 50, "an RLE run's value runs past"},
		{"truncated packed run", packed(7, 1)[:5], 1, 50, "runs past its"},
		{"no levels in a page without values", nil, 1, 0, ""},
		{"levels in a page without values", run(1, 1), 1, 0, "a run of 1 in a page of 0"},
		{"packed levels in a page without values", packed(1, 1), 1, 0, "runs of 8 levels in a page of 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := walkLevels("definition", tt.runs, tt.max, tt.nv)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzWalkLevels: whatever levels walkLevels accepts, parquet-go decodes
// to at least the page's levels (it drops the padding past them), with no
// more memory than their bytes bound.
func FuzzWalkLevels(f *testing.F) {
	run := func(count uint64, v byte) []byte { return append(binary.AppendUvarint(nil, count<<1), v) }
	packed := func(groups uint64, width int) []byte {
		return append(binary.AppendUvarint(nil, groups<<1|1), bytes.Repeat([]byte{0xb6}, int(groups)*width)...)
	}
	f.Add(packed(32, 1), uint8(1), uint16(50)) // DuckDB's: 256 levels for 50 values
	f.Add(append(run(7, 1), packed(32, 1)...), uint8(1), uint16(50))
	f.Add(append(run(95, 1), packed(1, 1)...), uint8(1), uint16(100))
	f.Add(append(run(10, 3), packed(3, 2)...), uint8(3), uint16(34))
	f.Add(hugeRun, uint8(1), uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, max uint8, nv uint16) {
		max = max%7 + 1
		if walkLevels("definition", b, int(max), int64(nv)) != nil || len(b) == 0 {
			return
		}
		enc := rle.Encoding{BitWidth: bits.Len8(max)}
		got, err := enc.DecodeLevels(nil, b)
		if err != nil {
			t.Fatalf("accepted levels do not decode: %v", err)
		}
		if len(got) < int(nv) || len(got) > int(nv)+8*len(b) {
			t.Fatalf("%d levels decoded for a page of %d values from %d bytes", len(got), nv, len(b))
		}
	})
}

// TestOpenParquetDuckDBNulls: DuckDB pads the bit-packed run that ends
// a page's definition levels to 256 levels, whatever the page's count
// (testdata/duckdb/nulls.parquet: 50 rows, nulls in two columns).
func TestOpenParquetDuckDBNulls(t *testing.T) {
	b, err := os.ReadFile("testdata/duckdb/nulls.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := openBytes(b, DefaultLimits()); err != nil {
		t.Fatal(err)
	}
}

// TestCheckLevelsCodecs: the levels of a v1 page are found through each
// codec's decompression.
func TestCheckLevelsCodecs(t *testing.T) {
	body := func(runs []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(runs)))
		return append(append(b, runs...), bytes.Repeat([]byte("values"), 100)...)
	}
	compressors := map[format.CompressionCodec]func([]byte) []byte{
		format.Uncompressed: func(b []byte) []byte { return b },
		format.Snappy:       func(b []byte) []byte { return s2.EncodeSnappy(nil, b) },
		format.Zstd: func(b []byte) []byte {
			e, _ := zstd.NewWriter(nil)
			return e.EncodeAll(b, nil)
		},
		format.Gzip: func(b []byte) []byte {
			var out bytes.Buffer
			w := gzip.NewWriter(&out)
			w.Write(b)
			w.Close()
			return out.Bytes()
		},
		format.Brotli: func(b []byte) []byte {
			var out bytes.Buffer
			w := brotli.NewWriter(&out)
			w.Write(b)
			w.Close()
			return out.Bytes()
		},
	}
	for codec, compress := range compressors {
		for _, bad := range []bool{false, true} {
			runs := append(binary.AppendUvarint(nil, 100<<1), 1)
			if bad {
				runs = hugeRun
			}
			raw := body(runs)
			data := compress(raw)
			h := &format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(raw)), CompressedPageSize: int32(len(data))}
			h.DataPageHeader.Set(format.DataPageHeader{NumValues: 100, Encoding: format.Plain,
				DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})
			s := pageScanner{r: bytes.NewReader(data), lim: DefaultLimits()}
			_, err := s.checkLevels(codec, h, 0, int64(len(data)), 100, 0, 1, false)
			if bad != (err != nil) {
				t.Errorf("%v, bad levels %v: err = %v", codec, bad, err)
			}
		}
	}
}

// TestOpenParquetRefusesHugeLevelRuns: a page of an optional column whose
// definition levels declare 2^28 levels is refused by OpenParquet, with
// v1 and v2 data pages, before parquet-go reads it.
func TestOpenParquetRefusesHugeLevelRuns(t *testing.T) {
	type row struct {
		ID   int64  `parquet:"id"`
		Note string `parquet:"note,optional"`
	}
	rows := make([]row, 200)
	for i := range rows {
		rows[i].ID = int64(i)
		if i%3 > 0 { // nulls between values: bit-packed levels, several bytes of them
			rows[i].Note = "n"
		}
	}
	for _, version := range []int{1, 2} {
		good := writeFile(t, rows, parquet.Compression(&uncompressed.Codec{}), parquet.DataPageVersion(version))
		if err := openBytes(good, DefaultLimits()); err != nil {
			t.Fatalf("v%d: the good file: %v", version, err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(good), int64(len(good)))
		if err != nil {
			t.Fatal(err)
		}
		md := pf.Metadata().RowGroups[0].Columns[1].MetaData
		shape, err := walkThrift(good[md.DataPageOffset:])
		if err != nil {
			t.Fatal(err)
		}
		levels := int(md.DataPageOffset) + shape.size
		if version == 1 {
			levels += 4 // the levels' byte length
		}
		bad := bytes.Clone(good)
		copy(bad[levels:], hugeRun)
		err = openBytes(bad, DefaultLimits())
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "definition levels: a run of 268435456") {
			t.Fatalf("v%d: err = %v", version, err)
		}
	}
}

// TestCheckDelta: DELTA_BINARY_PACKED headers (and the two of a
// DELTA_BYTE_ARRAY page) may declare at most the page's values.
func TestCheckDelta(t *testing.T) {
	ints := make([]int64, 1000)
	for i := range ints {
		ints[i] = 1_700_000_000_000 + int64(i*i*7919%100_003)
	}
	packed, _ := (&delta.BinaryPackedEncoding{}).EncodeInt64(nil, ints)
	var strs []byte
	offs := []uint32{0}
	for i := range 1000 {
		strs = fmt.Appendf(strs, "peer-%d", i*31%977)
		offs = append(offs, uint32(len(strs)))
	}
	byteArrays, _ := (&delta.ByteArrayEncoding{}).EncodeByteArray(nil, strs, offs)
	lens := make([]int32, 1000)
	for i := range lens {
		lens[i] = int32(i * 13 % 17)
	}
	prefixes, _ := (&delta.BinaryPackedEncoding{}).EncodeInt32(nil, lens)
	huge := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 128), 4), 1<<30)
	huge = binary.AppendVarint(huge, 0)
	tests := []struct {
		name string
		enc  format.Encoding
		data []byte
		nv   int64
		want string // "" for accepted
	}{
		{"int64s", format.DeltaBinaryPacked, packed, 1000, ""},
		{"byte arrays", format.DeltaByteArray, byteArrays, 1000, ""},
		{"a page of fewer values", format.DeltaBinaryPacked, packed, 999, "declares 1000 values in a page of 999"},
		{"2^30 values", format.DeltaBinaryPacked, huge, 1000, "declares 1073741824 values"},
		{"2^30 lengths", format.DeltaLengthByteArray, huge, 1000, "declares 1073741824 values"},
		{"2^30 suffixes", format.DeltaByteArray, append(bytes.Clone(prefixes), huge...), 1000, "suffix lengths: a header declares 1073741824"},
		{"truncated blocks", format.DeltaByteArray, prefixes[:len(prefixes)-5], 1000, "mini-block"},
		{"no header", format.DeltaBinaryPacked, []byte{0x80}, 1000, "header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDelta(bytes.NewReader(tt.data), tt.enc, tt.nv)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestOpenParquetRefusesHugeDeltaHeader: a delta-encoded page declaring
// 2^30 values is refused before parquet-go allocates them.
func TestOpenParquetRefusesHugeDeltaHeader(t *testing.T) {
	type row struct {
		At int64 `parquet:"at,delta"`
	}
	rows := make([]row, 300)
	for i := range rows {
		rows[i].At = 1_700_000_000_000 + int64(i*i%1009)
	}
	good := writeFile(t, rows, parquet.Compression(&uncompressed.Codec{}))
	if err := openBytes(good, DefaultLimits()); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[0].MetaData
	if !slices.Contains(md.Encoding, format.DeltaBinaryPacked) {
		t.Fatalf("encodings %v", md.Encoding)
	}
	shape, err := walkThrift(good[md.DataPageOffset:])
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	hdr := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(nil, 128), 4), 1<<30)
	copy(bad[int(md.DataPageOffset)+shape.size:], binary.AppendVarint(hdr, 0))
	err = openBytes(bad, DefaultLimits())
	if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "declares 1073741824 values in a page of 300") {
		t.Fatalf("err = %v", err)
	}
}
