package rowio

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/encoding/delta"
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
			err := s.checkLevels(codec, h, 0, int64(len(data)), 100, 0, 1)
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
