package rowiotest

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

type row struct {
	N int64  `parquet:"n"`
	S string `parquet:"s,dict,optional"`
}

// sample writes rows of row, several pages a column, and returns the file.
func sample(t *testing.T, n int) []byte {
	t.Helper()
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{N: int64(i) * 7, S: []string{"a", "bb", ""}[i%3]}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(256))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every row of the Parquet file b.
func readAll(b []byte) ([]row, error) {
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	r := parquet.NewGenericReader[row](f)
	defer r.Close()
	out := make([]row, f.NumRows())
	n, err := r.Read(out)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return out[:n], err
}

// lastByteOf is the offset of the last byte of column col's chunk in
// row group 0: the data of the column's last page.
func lastByteOf(t *testing.T, b []byte, col int) int64 {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata().RowGroups[0].Columns[col].MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	return start + md.TotalCompressedSize - 1
}

func TestPatchCRCs(t *testing.T) {
	good := sample(t, 300)
	want, err := readAll(good)
	if err != nil {
		t.Fatal(err)
	}
	last := lastByteOf(t, good, 0)
	for _, tc := range []struct {
		name    string
		mutate  func(b []byte) // nil: none
		patched int
		check   func(t *testing.T, got []row)
	}{
		{name: "intact", patched: 0, check: func(t *testing.T, got []row) {
			if !slices.Equal(got, want) {
				t.Fatal("the intact file reads other rows")
			}
		}},
		{name: "one page's data", mutate: func(b []byte) { b[last] ^= 0x01 }, patched: 1, check: func(t *testing.T, got []row) {
			// The last value's high byte, flipped.
			w := slices.Clone(want)
			w[len(w)-1].N ^= 1 << 56
			if !slices.Equal(got, w) {
				t.Fatalf("last row %+v, want %+v", got[len(got)-1], w[len(w)-1])
			}
		}},
		{name: "two columns", mutate: func(b []byte) { b[last] ^= 0x01; b[lastByteOf(t, b, 1)] ^= 0x01 }, patched: 2},
		{name: "no footer", mutate: func(b []byte) { b[len(b)-1] = 'X' }, patched: 0},
		{name: "footer cut", mutate: func(b []byte) { b[last] ^= 0x01; b[len(b)-8] = 0xff }, patched: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, patch := range []struct {
				name string
				fn   func([]byte) ([]byte, int)
			}{{"fix", FixPageCRCs}, {"clear", ClearPageCRCs}} {
				b := slices.Clone(good)
				if tc.mutate != nil {
					tc.mutate(b)
				}
				orig := slices.Clone(b)
				fixed, n := patch.fn(b)
				if !bytes.Equal(b, orig) {
					t.Fatalf("%s changed its input", patch.name)
				}
				if n != tc.patched || len(fixed) != len(b) {
					t.Fatalf("%s patched %d pages (%d bytes of %d), want %d", patch.name, n, len(fixed), len(b), tc.patched)
				}
				if n == 0 {
					if !bytes.Equal(fixed, b) {
						t.Fatalf("%s changed a file it patched nothing of", patch.name)
					}
					continue
				}
				if _, err := readAll(b); !errors.Is(err, parquet.ErrCorrupted) {
					t.Fatalf("the mutated file read with %v, want a CRC mismatch", err)
				}
				got, err := readAll(fixed)
				if err != nil {
					t.Fatalf("%s: %v", patch.name, err)
				}
				if again, n := FixPageCRCs(fixed); n != 0 || !bytes.Equal(again, fixed) {
					t.Fatalf("%s left %d pages to patch", patch.name, n)
				}
				if tc.check != nil {
					tc.check(t, got)
				}
			}
		})
	}
}

// TestPatchChunkWidth patches page headers whose CRC takes 1 to 5
// bytes: a new CRC that fits is written in the old one's bytes (padded),
// one that does not becomes 0, and a clear is 0 in every width.
func TestPatchChunkWidth(t *testing.T) {
	data := []byte("page data, whose CRC-32 takes five bytes as a varint")
	sum := int32(crc32.ChecksumIEEE(data))
	if varintLen(zigzag(sum)) != 5 {
		t.Fatalf("the sample data's CRC %#x takes %d bytes", sum, varintLen(zigzag(sum)))
	}
	for _, tc := range []struct {
		name  string
		crc   int32 // the stale one
		clear bool
		want  int32
	}{
		{"5 bytes", -1 << 30, false, sum},
		{"1 byte", 3, false, 0},
		{"4 bytes", 1 << 26, false, 0},
		{"clear, 5 bytes", -1 << 30, true, 0},
		{"clear, 1 byte", 3, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(data)),
				CompressedPageSize: int32(len(data)), CRC: tc.crc,
				DataPageHeader: thrift.New(format.DataPageHeader{NumValues: 1})}
			hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
			if err != nil {
				t.Fatal(err)
			}
			chunk := append(append([]byte("PAR1"), hb...), data...)
			chunk = append(chunk, chunk[4:]...) // two pages
			if n := patchChunk(chunk, 4, tc.clear); n != 2 {
				t.Fatalf("patched %d pages, want 2", n)
			}
			for at := 4; at < len(chunk); at += len(hb) + len(data) {
				var got format.PageHeader
				if err := thrift.Unmarshal(new(thrift.CompactProtocol), chunk[at:at+len(hb)], &got); err != nil {
					t.Fatal(err)
				}
				if got.CRC != tc.want || got.CompressedPageSize != h.CompressedPageSize || got.DataPageHeader.V.NumValues != 1 {
					t.Fatalf("page at %d: CRC %#x, size %d; want CRC %#x", at, got.CRC, got.CompressedPageSize, tc.want)
				}
				if !bytes.Equal(chunk[at+len(hb):at+len(hb)+len(data)], data) {
					t.Fatalf("page at %d: data changed", at)
				}
			}
		})
	}
}
