package rowio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
)

// brokenDictWidth returns observations whose "source" column (two values
// in its dictionary, bit width 1) has its data page's bit width set to
// width, its CRC fixed as a crafted file's would be, and the page's offset.
func brokenDictWidth(t testing.TB, width byte) ([]byte, int64) {
	t.Helper()
	return brokenDictWidthOf(t, width, &parquet.Uncompressed)
}

// brokenDictWidthOf is brokenDictWidth for pages compressed by codec:
// uncompressed, or LZ4_RAW, whose block starts with the values' first
// bytes as literals (the width among them).
func brokenDictWidthOf(t testing.TB, width byte, codec compress.Codec) ([]byte, int64) {
	t.Helper()
	good := writeFile(t, sampleObs(200), parquet.Compression(codec))
	for _, c := range footerOf(t, good).RowGroups[0].Columns {
		md := c.MetaData
		if strings.Join(md.PathInSchema, ".") != "source" {
			continue
		}
		off := md.DataPageOffset
		shape, err := walkThrift(good[off:])
		if err != nil {
			t.Fatal(err)
		}
		at := off + int64(shape.size) // a v2 page without levels: the values come first
		if md.Codec == format.Lz4Raw {
			if tok := good[at]; tok>>4 == 0 || tok>>4 == 15 {
				t.Fatalf("the LZ4_RAW block of column source starts with token %#x, want 1..14 literals", tok)
			}
			at++ // the first literal
		}
		b := bytes.Clone(good)
		if b[at] != 1 {
			t.Fatalf("the page of column source has bit width %d, want 1", b[at])
		}
		b[at] = width
		b, _ = rowiotest.FixPageCRCs(b)
		return b, off
	}
	t.Fatal("no column source")
	return nil, 0
}

// TestDictIndexPastDictionary: a dictionary-encoded page whose bit width
// is broken, so that its indexes run past the dictionary (parquet-go then
// panics with "index out of range"), is a corrupt file naming the file,
// column and page; a bit width parquet-go refuses itself keeps its error.
func TestDictIndexPastDictionary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "obs.parquet")
	for _, tt := range []struct {
		width byte
		lz4   bool   // the file's pages are LZ4_RAW (read through a view of them decompressed)
		want  string // after "PATH: corrupt Parquet: "; %d is the page's offset
	}{
		{2, false, `row group 0 column "source": page at offset %d: RLE_DICTIONARY index 2 (bit width 2) past the dictionary's 2 values`},
		{8, false, `row group 0 column "source": page at offset %d: RLE_DICTIONARY index 170 (bit width 8) past the dictionary's 2 values`},
		{32, false, `row group 0 column "source": page at offset %d: RLE_DICTIONARY index 2863311530 (bit width 32) past the dictionary's 2 values`},
		{33, false, `decoding page 1 of column "source": RLE_DICTIONARY: cannot decode INT32 with invalid bit-width=33`},
		// The page's offset in the file, not in the view, past the file's end.
		{2, true, `row group 0 column "source": page at offset %d: RLE_DICTIONARY index 2 (bit width 2) past the dictionary's 2 values`},
		{8, true, `row group 0 column "source": page at offset %d: RLE_DICTIONARY index 170 (bit width 8) past the dictionary's 2 values`},
	} {
		t.Run(fmt.Sprint(tt.width, map[bool]string{true: "/lz4"}[tt.lz4]), func(t *testing.T) {
			codec := compress.Codec(&parquet.Uncompressed)
			if tt.lz4 {
				codec = &lz4.Codec{}
			}
			b, off := brokenDictWidthOf(t, tt.width, codec)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			err := readAllFile[schema.Observation](p)
			want := p + ": corrupt Parquet: " + tt.want
			if strings.Contains(tt.want, "%d") {
				want = fmt.Sprintf(want, off)
			}
			if err == nil || err.Error() != want || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		})
	}
}

// TestHybridRuns: the RLE/bit-packed hybrid runs are read as parquet-go
// reads them, up to the page's values.
func TestHybridRuns(t *testing.T) {
	for _, tt := range []struct {
		name  string
		b     []byte
		width int
		n     int64
		want  []uint64
	}{
		{"rle", []byte{3 << 1, 5}, 3, 3, []uint64{5, 5, 5}},
		{"rle cut at n", []byte{8 << 1, 1}, 1, 2, []uint64{1, 1}},
		{"rle of 2 bytes", []byte{1 << 1, 0x34, 0x12}, 13, 1, []uint64{0x1234}},
		{"bit-packed", []byte{1<<1 | 1, 0b10001000, 0b11000110, 0b11111010}, 3, 8, []uint64{0, 1, 2, 3, 4, 5, 6, 7}},
		{"bit-packed padding", []byte{1<<1 | 1, 0b10001000, 0b11000110, 0b11111010}, 3, 5, []uint64{0, 1, 2, 3, 4}},
		{"runs", []byte{2 << 1, 1, 1<<1 | 1, 0x0f}, 1, 10, []uint64{1, 1, 1, 1, 1, 1, 0, 0, 0, 0}},
		{"cut", []byte{1<<1 | 1, 0xff}, 2, 8, []uint64{3, 3, 3, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []uint64
			hybridRuns(tt.b, tt.width, tt.n, func(v uint64, count int64) bool {
				for range count {
					got = append(got, v)
				}
				return true
			})
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
