package rowio

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/format"
	pierrec "github.com/pierrec/lz4/v4"
)

// lz4Blocks are LZ4 blocks, valid (want >= 0: what they decompress to)
// or not (an error containing err).
var lz4Blocks = []struct {
	name string
	src  []byte
	want int64
	err  string
}{
	{"empty", nil, 0, ""},
	{"literals", []byte{0x30, 'a', 'b', 'c'}, 3, ""},
	{"literal, match, literal", []byte{0x14, 'a', 1, 0, 0x10, 'b'}, 10, ""},
	{"long lengths", append(append([]byte{0xff, 15}, bytes.Repeat([]byte{'x'}, 30)...), 1, 0, 255, 10, 0x00), 30 + 284, ""},
	{"offset 0", []byte{0x14, 'a', 0, 0, 0x10, 'b'}, -1, "match offset 0"},
	{"offset before the output", []byte{0x14, 'a', 2, 0, 0x10, 'b'}, -1, "match offset 2 at 1 bytes"},
	{"literals past the end", []byte{0x50, 'a', 'b'}, -1, "literals run past the end"},
	{"last sequence with a match", []byte{0x14, 'a'}, -1, "the last sequence has a match"},
	{"truncated offset", []byte{0x14, 'a', 1}, -1, "truncated match offset"},
	{"truncated length", []byte{0xf0, 255}, -1, "truncated length"},
}

// TestLZ4Size: the walk finds the length valid blocks decompress to, as
// pierrec/lz4 decodes them, and refuses what pierrec/lz4 refuses.
func TestLZ4Size(t *testing.T) {
	for _, tt := range lz4Blocks {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lz4Size(tt.src, 1<<20)
			if tt.want < 0 {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("lz4Size = %d, %v; want an error with %q", got, err, tt.err)
				}
				if _, err := pierrec.UncompressBlock(tt.src, make([]byte, 1<<16)); err == nil {
					t.Fatal("pierrec/lz4 decodes it")
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("lz4Size = %d, %v; want %d", got, err, tt.want)
			}
			if err := unLZ4(make([]byte, got), tt.src); err != nil {
				t.Fatalf("pierrec/lz4: %v", err)
			}
			if got > 2 {
				if over, err := lz4Size(tt.src, got-2); err != nil || over <= got-2 {
					t.Fatalf("with most %d: %d, %v", got-2, over, err)
				}
			}
		})
	}
}

// FuzzLZ4Size: whatever lz4Size accepts, pierrec/lz4 decodes to exactly
// that length; whatever it refuses, pierrec/lz4 refuses.
func FuzzLZ4Size(f *testing.F) {
	for _, b := range lz4Blocks {
		f.Add(b.src)
	}
	var c pierrec.Compressor
	for _, s := range [][]byte{[]byte(strings.Repeat("infohash ", 50)), bytes.Repeat([]byte{0}, 1000)} {
		dst := make([]byte, pierrec.CompressBlockBound(len(s)))
		n, err := c.CompressBlock(s, dst)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(dst[:n])
	}
	const most = 1 << 16
	f.Fuzz(func(t *testing.T, src []byte) {
		size, err := lz4Size(src, most)
		switch {
		case err != nil:
			if _, derr := pierrec.UncompressBlock(src, make([]byte, most)); derr == nil {
				t.Fatalf("lz4Size: %v; pierrec/lz4 decodes it", err)
			}
		case size <= most:
			if err := unLZ4(make([]byte, size), src); err != nil {
				t.Fatalf("lz4Size = %d; %v", size, err)
			}
		}
	})
}

// duckRow is a row of testdata/duckdb/lz4.parquet (see its README).
type duckRow struct {
	InfoHash []byte  `parquet:"info_hash,optional"`
	N        *int64  `parquet:"n,optional"`
	Source   *string `parquet:"source,optional"`
}

// TestReadsDuckDBLZ4: a file DuckDB wrote with COMPRESSION lz4 (whose
// hashes do not compress: parquet-go alone reads its pages as stale
// bytes) reads back as DuckDB wrote it.
func TestReadsDuckDBLZ4(t *testing.T) {
	r, err := Open[duckRow]("testdata/duckdb/lz4.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]duckRow, 1000)
	for i := range want {
		h := sha1.Sum([]byte(strconv.Itoa(i)))
		want[i].InfoHash = h[:]
		if i%7 != 3 {
			want[i].N = new(int64(i))
		}
		if i%5 != 0 {
			want[i].Source = new(fmt.Sprintf("src%d", i%3))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %d rows, not as DuckDB wrote them; row 0: %+v", len(got), got[0])
	}
}

// TestLZ4RawRefused: damaged or crafted LZ4_RAW files are refused, one
// line, before their pages are decoded.
func TestLZ4RawRefused(t *testing.T) {
	lz := writeFile(t, sampleObs(2000), parquet.Compression(&lz4.Codec{}))
	md := footerOf(t, lz)
	c := md.RowGroups[0].Columns[0].MetaData
	shape, err := walkThrift(lz[chunkStart(&c):])
	if err != nil {
		t.Fatal(err)
	}
	badMatch := bytes.Clone(lz) // the first sequence copies from before the output
	badMatch[chunkStart(&c)+int64(shape.size)] = 0x01
	two := writeFile(t, sampleObs(2000), parquet.MaxRowsPerRowGroup(1000))
	mixed := rewriteFooter(t, two, func(md *format.FileMetaData) {
		cc := &md.RowGroups[1].Columns[0].MetaData
		cc.Codec = map[bool]format.CompressionCodec{true: format.Zstd, false: format.Snappy}[cc.Codec == format.Snappy]
	})
	tests := []struct {
		name string
		file []byte
		own  bool
		kind error
		want string
	}{
		{"match before the output", badMatch, false, ErrCorrupt, "LZ4_RAW: match offset"},
		{"chunks of two codecs", mixed, false, ErrUnsupported, "the column's first chunk"},
		{"a file infohash wrote", lz, true, ErrUnsupported, "LZ4_RAW compression in a file infohash wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.own {
				_, err = OpenOwnParquet(bytes.NewReader(tt.file), int64(len(tt.file)), DefaultLimits())
			} else {
				err = openBytes(tt.file, DefaultLimits())
			}
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want %v with %q", err, tt.kind, tt.want)
			}
		})
	}
}

// TestUnpackedChecksCRC: a view's LZ4_RAW page whose data does not match
// its header's CRC (damage after the scan) fails its read.
func TestUnpackedChecksCRC(t *testing.T) {
	src := []byte{0x30, 'a', 'b', 'c'}
	for _, crc := range []int32{0, 1} {
		v := &unpacked{r: bytes.NewReader(src), tailAt: 3,
			segs: []segment{{n: 3, src: 0, csize: int64(len(src)), page: 7, crc: crc}}}
		b := make([]byte, 3)
		_, err := v.ReadAt(b, 0)
		switch {
		case crc == 0 && (err != nil || string(b) != "abc"):
			t.Fatalf("no CRC: read %q, %v", b, err)
		case crc != 0 && (err == nil || !strings.Contains(err.Error(), "page at offset 7: its data does not match its CRC")):
			t.Fatalf("bad CRC: err = %v", err)
		}
	}
}

// TestFileOffset: an offset of a view of decompressed LZ4_RAW chunks maps
// back to the file: the data before them as it is, a rewritten page
// header to its page's header in the file, a page kept as it is (a v2
// page stored uncompressed) by its place in the file, a page of nulls
// standing for one with BIT_PACKED levels to that page; an offset of the
// file itself (no view) is its own.
func TestFileOffset(t *testing.T) {
	v := &unpacked{dataEnd: 100, tailAt: 180, segs: []segment{
		{at: 100, n: 10, hdr: make([]byte, 10), page: 50},
		{at: 110, n: 40, src: 60, csize: 20, page: 50},     // its header at 50 in the file, 10 bytes
		{at: 150, n: 20, src: 80},                          // a page as it is: header and data at 80
		{at: 170, n: 10, hdr: make([]byte, 10), page: 100}, // a page of nulls (nullsPage) for the one at 100
	}}
	for _, tt := range []struct {
		src       io.ReaderAt
		off, want int64
	}{
		{v, 4, 4},
		{v, 99, 99},
		{v, 100, 50},
		{v, 110, 50},
		{v, 150, 80},
		{v, 155, 85},
		{v, 175, 100},
		{v, 180, 180},
		{bytes.NewReader(nil), 150, 150},
	} {
		if got := fileOffset(tt.src, tt.off); got != tt.want {
			t.Errorf("fileOffset(%T, %d) = %d, want %d", tt.src, tt.off, got, tt.want)
		}
	}
}
