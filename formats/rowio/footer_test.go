package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// footerFile is a small Parquet file and its footer's offset.
func footerFile(t *testing.T) ([]byte, int64) {
	t.Helper()
	type row struct {
		K int64  `parquet:"k"`
		V string `parquet:"v,optional"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	if _, err := w.Write([]row{{1, "a"}, {2, ""}, {3, "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	return b, int64(len(b)) - 8 - n
}

// TestFooterSum: SumFooter sums the bytes from the footer's start to the
// end of the file; Check passes the intact file, and any flipped byte of
// that range, the file cut short or grown, is a FooterError naming the
// file; a zero sum checks nothing.
func TestFooterSum(t *testing.T) {
	b, start := footerFile(t)
	sum, err := SumFooter(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (FooterSum{Size: int64(len(b)) - start, CRC32C: crc32.Checksum(b[start:], castagnoli)}); sum != want {
		t.Fatalf("SumFooter = %+v, want %+v", sum, want)
	}
	for _, tc := range []struct {
		name string
		file func() []byte
		sum  FooterSum
		want string // "" for intact
	}{
		{"intact", func() []byte { return b }, sum, ""},
		{"not recorded", func() []byte { c := bytes.Clone(b); c[len(c)-20] ^= 1; return c }, FooterSum{}, ""},
		{"first byte of the footer", func() []byte { c := bytes.Clone(b); c[start] ^= 0x10; return c }, sum, "footer CRC-32C"},
		{"the length", func() []byte { c := bytes.Clone(b); c[len(c)-8] ^= 1; return c }, sum, "footer CRC-32C"},
		{"the magic", func() []byte { c := bytes.Clone(b); c[len(c)-1] ^= 1; return c }, sum, "footer CRC-32C"},
		{"a byte before the footer", func() []byte { c := bytes.Clone(b); c[start-1] ^= 1; return c }, sum, ""},
		{"grown", func() []byte { return append(bytes.Clone(b), "PAR1"...) }, sum, "footer CRC-32C"},
		{"cut short", func() []byte { return b[:sum.Size-1] }, sum, "shorter than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.file()
			r, err := tc.sum.Check(bytes.NewReader(f), int64(len(f)), "/d/x.parquet")
			if tc.want != "" {
				var fe *FooterError
				if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "dataset: /d/x.parquet: ") ||
					!strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Check: %v, want a FooterError: dataset: /d/x.parquet: …%s…", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The reader reads the file as it is, at every offset and
			// across the footer's start.
			for off := int64(0); off < int64(len(f)); off += 7 {
				for _, n := range []int{1, 13, len(f)} {
					got := make([]byte, n)
					k, err := r.ReadAt(got, off)
					want := f[off:min(off+int64(n), int64(len(f)))]
					if !bytes.Equal(got[:k], want) || (k < n) != errors.Is(err, io.EOF) || (err != nil && !errors.Is(err, io.EOF)) {
						t.Fatalf("ReadAt(%d bytes, %d) = %d, %v", n, off, k, err)
					}
				}
			}
			if _, err := parquet.OpenFile(r, int64(len(f)), parquet.SkipPageIndex(true)); err != nil {
				t.Fatalf("opening through the checked reader: %v", err)
			}
		})
	}
}

// TestSumFooterOfNoParquet: a file that ends in no footer is a CorruptError.
func TestSumFooterOfNoParquet(t *testing.T) {
	b, _ := footerFile(t)
	for name, f := range map[string][]byte{
		"short":     []byte("PAR1PAR1"),
		"no magic":  append(bytes.Clone(b), 'x'),
		"too large": append([]byte("PAR1\x00\x00\x00\x00"), "\xff\xff\x00\x00PAR1"...),
	} {
		if _, err := SumFooter(bytes.NewReader(f), int64(len(f))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: SumFooter: %v, want a CorruptError", name, err)
		}
	}
}
