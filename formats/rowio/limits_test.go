package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

func sampleObs(n int) []schema.Observation {
	out := make([]schema.Observation, n)
	for i := range out {
		out[i] = schema.Observation{InfoHash: schema.Hash{byte(i), byte(i >> 8), 7}, HashType: 1,
			ObservedAt: 1700000000000 + int64(i), Source: []string{"get_peers", "import"}[i%2], RunID: "r"}
	}
	return out
}

// writeFile writes rows of T to a Parquet file with extra writer options.
func writeFile[T any](t testing.TB, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.parquet")
	w, err := Create[T](p, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rewriteFooter decodes a file's metadata, lets edit change it and
// returns the file with the edited footer.
func rewriteFooter(t testing.TB, file []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	data := file[:len(file)-8-n]
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), file[len(data):len(file)-8], &md); err != nil {
		t.Fatal(err)
	}
	edit(&md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(data), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// withFooter replaces a file's footer bytes.
func withFooter(file, footer []byte) []byte {
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	out := append(bytes.Clone(file[:len(file)-8-n]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func openBytes(b []byte, lim Limits) error {
	_, err := OpenParquet(bytes.NewReader(b), int64(len(b)), nil, lim)
	return err
}

func TestOpenParquetRefuses(t *testing.T) {
	good := writeFile(t, sampleObs(300), parquet.PageBufferSize(1024))
	small := func(f func(*Limits)) Limits { l := DefaultLimits(); f(&l); return l }
	chunk0 := func(md *format.FileMetaData) *format.ColumnMetaData { return &md.RowGroups[0].Columns[0].MetaData }
	tests := []struct {
		name  string
		file  []byte
		lim   Limits
		limit bool   // wraps ErrLimit (else CorruptError)
		want  string // in the message
	}{
		{"4 PB of rows", rewriteFooter(t, good, func(md *format.FileMetaData) {
			md.NumRows = 4 << 50
			md.RowGroups[0].NumRows = 4 << 50
		}), DefaultLimits(), true, "the file declares 4503599627370496 rows (limit 10000000000)"},
		{"row group rows", rewriteFooter(t, good, func(md *format.FileMetaData) { md.RowGroups[0].NumRows = 1 << 40 }),
			DefaultLimits(), true, "row group 0 declares 1099511627776 rows"},
		{"negative rows", rewriteFooter(t, good, func(md *format.FileMetaData) { md.RowGroups[0].NumRows = -1 }),
			DefaultLimits(), false, "row group 0 declares -1 rows"},
		{"row group bytes", rewriteFooter(t, good, func(md *format.FileMetaData) { md.RowGroups[0].TotalByteSize = 1 << 50 }),
			DefaultLimits(), true, "uncompressed bytes"},
		{"chunk past the end", rewriteFooter(t, good, func(md *format.FileMetaData) { chunk0(md).TotalCompressedSize = 1 << 40 }),
			DefaultLimits(), false, "extend past the end"},
		{"chunk before the start", rewriteFooter(t, good, func(md *format.FileMetaData) { chunk0(md).DataPageOffset = 1 }),
			DefaultLimits(), false, "extend past the end"},
		{"more rows than values", rewriteFooter(t, good, func(md *format.FileMetaData) { md.NumRows++; md.RowGroups[0].NumRows++ }),
			DefaultLimits(), false, "values for"},
		{"file rows not the row groups'", rewriteFooter(t, good, func(md *format.FileMetaData) { md.NumRows = 1 << 31 }),
			DefaultLimits(), false, "the footer declares 2147483648 rows, its row groups 300"},
		{"row group rows not the file's", rewriteFooter(t, good, func(md *format.FileMetaData) { md.RowGroups[0].NumRows = 1 << 20 }),
			DefaultLimits(), false, "the footer declares 300 rows, its row groups 1048576"},
		{"fixed length", rewriteFooter(t, good, func(md *format.FileMetaData) { md.Schema[1].TypeLength.V = 1 << 30 }),
			DefaultLimits(), false, "FIXED_LEN_BYTE_ARRAY length"},
		{"children", rewriteFooter(t, good, func(md *format.FileMetaData) { md.Schema[0].NumChildren.V = 1 << 30 }),
			DefaultLimits(), false, "claims 1073741824 children"},
		{"footer length", append(bytes.Clone(good[:len(good)-8]), 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'),
			DefaultLimits(), false, "the footer claims 2147483647 bytes"},
		{"list length lie", withFooter(good, []byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}),
			DefaultLimits(), false, "declares more than it holds"},
		{"deep nesting", withFooter(good, append(bytes.Repeat([]byte{0x1c}, 40), bytes.Repeat([]byte{0}, 41)...)),
			DefaultLimits(), false, "nested deeper than 32"},
		{"trailing footer bytes", withFooter(good, []byte{0x15, 0x02, 0x00, 0x00}), DefaultLimits(), false, "trailing bytes"},
		{"metadata memory", good, small(func(l *Limits) { l.MaxMetadataBytes = 1000 }), true, "bytes of metadata (limit 1000)"},
		{"footer size", good, small(func(l *Limits) { l.MaxFooterBytes = 100 }), true, "(limit 100)"},
		{"page size", good, small(func(l *Limits) { l.MaxPageBytes = 100 }), true, "(limit 100)"},
		{"page values", good, small(func(l *Limits) { l.MaxPageValues = 10 }), true, "values (limit 10"},
		{"page header", good, small(func(l *Limits) { l.MaxPageHeader = 8 }), true, "is over 8 bytes"},
		{"row group pages", good, small(func(l *Limits) { l.MaxRowGroupBytes = 2000 }), true, "(limit 2000)"},
		{"schema depth", good, small(func(l *Limits) { l.MaxSchemaDepth = 0 }), true, "nests deeper than 0"},
		{"truncated", good[:len(good)-3], DefaultLimits(), false, "no PAR1 magic at the end"},
		{"not parquet", []byte("hello, parquet"), DefaultLimits(), false, "no PAR1 magic at the start"},
		{"tiny", []byte("PAR1PAR1"), DefaultLimits(), false, "too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := openBytes(tt.file, tt.lim)
			if err == nil {
				t.Fatal("opened")
			}
			if errors.Is(err, ErrLimit) != tt.limit || errors.Is(err, ErrCorrupt) == tt.limit {
				t.Fatalf("limit=%v corrupt=%v: %v", errors.Is(err, ErrLimit), errors.Is(err, ErrCorrupt), err)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want %q", err, tt.want)
			}
		})
	}
}

// Files from every codec and page version parquet-go writes, and a
// DuckDB-style layout, pass the checks and read back whole.
func TestOpenParquetAcceptsRealFiles(t *testing.T) {
	codecs := []compress.Codec{&uncompressed.Codec{}, &snappy.Codec{}, &gzip.Codec{}, &brotli.Codec{}, &zstd.Codec{}, &lz4.Codec{}}
	obs := sampleObs(5000)
	for _, c := range codecs {
		for _, v := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/v%d", c, v), func(t *testing.T) {
				b := writeFile(t, obs, parquet.Compression(c), parquet.DataPageVersion(v), parquet.PageBufferSize(4096))
				p := filepath.Join(t.TempDir(), "f.parquet")
				os.WriteFile(p, b, 0o644)
				r, err := Open[schema.Observation](p, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				got, err := r.ReadAll()
				if err != nil || !reflect.DeepEqual(got, obs) {
					t.Fatalf("read %d rows, err %v", len(got), err)
				}
			})
		}
	}
}

// Valid Parquet infohash does not read is refused, quickly.
func TestUnsupportedParquet(t *testing.T) {
	good := writeFile(t, sampleObs(10))
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"encrypted", append(bytes.Clone(good[:len(good)-4]), "PARE"...), "unsupported Parquet: the file is encrypted"},
		{"lzo", rewriteFooter(t, good, func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.Codec = format.LZO }),
			"compression codec LZO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- openBytes(tt.file, DefaultLimits()) }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
			case <-time.After(time.Minute): // a bound on a hang, not a speed
				t.Fatal("no answer in a minute")
			}
		})
	}
}

func footerOf(t testing.TB, b []byte) *format.FileMetaData {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	md := new(format.FileMetaData)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], md); err != nil {
		t.Fatal(err)
	}
	return md
}

func TestRecoverMakesPanicsErrors(t *testing.T) {
	f := func() (err error) {
		defer Recover(&err, "Parquet")
		var s []int
		_ = s[3]
		return nil
	}
	err := f()
	if !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), "corrupt Parquet: the decoder failed: runtime error: index out of range") {
		t.Fatalf("err = %v", err)
	}
	g := func() (err error) {
		defer Recover(&err, "Arrow IPC stream")
		panic(fmt.Errorf("%w: test", ErrLimit))
	}
	if err := g(); !errors.Is(err, ErrLimit) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
}
