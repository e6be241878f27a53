package rowio

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// codecStream writes batches of rows as an Arrow IPC stream, compressed
// with codec ("", "lz4", "zstd"): rowio's writer writes them
// uncompressed, and arrow-go's writer copies its batches.
func codecStream[T any](t testing.TB, codec string, batches ...[]T) []byte {
	t.Helper()
	var plain bytes.Buffer
	w := NewArrowWriter[T]("test", &plain)
	for _, rows := range batches {
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rowiotest.Recompress(t, codec, plain.Bytes())
}

// readArrowLimited reads every row of stream within lim.
func readArrowLimited[T any](stream []byte, lim Limits) ([]T, error) {
	r, err := OpenArrowLimited[T]("test", bytes.NewReader(stream), lim)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadAll()
}

// TestArrowValueLimit: a record batch of an Arrow stream whose data
// buffer of a bounded column declares more bytes than its values (not
// its nulls) could take at the bound each is refused, uncompressed from
// the batch's metadata, compressed (LZ4, ZSTD) from the buffer's declared
// uncompressed length, and only then: many values within the bound pass.
// The error names the batch's rows (counted over the stream).
func TestArrowValueLimit(t *testing.T) {
	const big = 200 << 10
	val := func(id, n int) blobRow { return blobRow{ID: int64(id), Val: bytes.Repeat([]byte{'v'}, n)} }
	nulls := func(n int) []blobRow {
		rows := make([]blobRow, n)
		for i := range rows {
			rows[i].ID = int64(i)
		}
		return rows
	}
	many := make([]blobRow, 400)
	for i := range many {
		many[i] = val(i, 1000)
	}
	tests := []struct {
		name    string
		batches [][]blobRow
		limit   Limits
		want    *ValueLimitError // nil: read
	}{
		{"no bound", [][]blobRow{{val(0, big)}}, DefaultLimits(), nil},
		{"at the bound", [][]blobRow{{val(0, big)}}, capVal(big), nil},
		{"a byte over the bound", [][]blobRow{{val(0, big+1)}}, capVal(big), nil}, // within the padding: the caller checks the row
		{"over the bound and its padding", [][]blobRow{{val(0, big+65)}}, capVal(big),
			&ValueLimitError{Column: "val", Batch: true, FirstRow: 1, Rows: 1, Values: 1, Limit: big, Bytes: big + 65}},
		{"one value among nulls", [][]blobRow{append(nulls(999), val(999, big))}, capVal(big / 2),
			&ValueLimitError{Column: "val", Batch: true, FirstRow: 1, Rows: 1000, Values: 1, Limit: big / 2, Bytes: big}},
		{"one value among nulls, at the bound", [][]blobRow{append(nulls(999), val(999, big))}, capVal(big), nil},
		{"many values at the bound", [][]blobRow{many}, capVal(1000), nil},
		{"many values over it", [][]blobRow{many}, capVal(900),
			&ValueLimitError{Column: "val", Batch: true, FirstRow: 1, Rows: 400, Values: 400, Limit: 900, Bytes: 400_000}},
		{"the second batch over", [][]blobRow{nulls(5), {val(5, 10), val(6, big)}}, capVal(big / 4),
			&ValueLimitError{Column: "val", Batch: true, RowGroup: 1, FirstRow: 6, Rows: 2, Values: 2, Limit: big / 4, Bytes: big + 10}},
	}
	for _, codec := range []string{"", "lz4", "zstd"} {
		for _, tt := range tests {
			t.Run(tt.name+"/"+codec, func(t *testing.T) {
				stream := codecStream(t, codec, tt.batches...)
				rows, err := readArrowLimited[blobRow](stream, tt.limit)
				if tt.want == nil {
					if n := len(slices.Concat(tt.batches...)); err != nil || len(rows) != n {
						t.Fatalf("read %d rows, err %v; want %d", len(rows), err, n)
					}
					return
				}
				got, ok := errors.AsType[*ValueLimitError](err)
				if !ok || !errors.Is(err, ErrLimit) || !strings.HasPrefix(err.Error(), "test: ") {
					t.Fatalf("err = %v, want a ValueLimitError naming the input", err)
				}
				if *got != *tt.want {
					t.Fatalf("err = %+v\nwant %+v", *got, *tt.want)
				}
			})
		}
	}
}

// TestArrowValueLimitPreRead: a body over preReadOver, which framedReader
// reads whole before the arrow reader, is checked the same way.
func TestArrowValueLimitPreRead(t *testing.T) {
	defer func(n int64) { preReadOver = n }(preReadOver)
	preReadOver = 1 << 10
	for _, codec := range []string{"", "zstd"} {
		stream := codecStream(t, codec, []blobRow{{ID: 1, Val: bytes.Repeat([]byte{'v'}, 100<<10)}})
		if _, err := readArrowLimited[blobRow](stream, capVal(100<<10)); err != nil {
			t.Fatalf("%s: at the bound: %v", codec, err)
		}
		_, err := readArrowLimited[blobRow](stream, capVal(10<<10))
		if got, ok := errors.AsType[*ValueLimitError](err); !ok || got.Bytes != 100<<10 {
			t.Fatalf("%s: err = %v, want the batch refused", codec, err)
		}
	}
}

type layoutFile struct {
	Path string `parquet:"path"`
	Raw  []byte `parquet:"raw"`
	Size int64  `parquet:"size"`
}

// layoutRow has a column of each kind rowio writes, its binary and string
// ones after others of every kind, to check where arrowWatch finds them.
type layoutRow struct {
	Hash  [20]byte     `parquet:"hash"`
	Small int8         `parquet:"small,int(8)"`
	Tags  []string     `parquet:"tags,list"`
	Name  string       `parquet:"name"`
	Files []layoutFile `parquet:"files,list"`
	Flag  bool         `parquet:"flag"`
	Ms    *int64       `parquet:"ms,optional"`
	At    int64        `parquet:"at,timestamp(millisecond)"`
	Blob  []byte       `parquet:"blob,optional"`
	Note  string       `parquet:"note,optional"`
}

// TestArrowWatchLayout: arrowWatch finds each binary or string column,
// top-level or in a list of structs, where the batch has its data buffer
// (each value of its own size here: a wrong buffer would pass over, or
// be refused within, the bound).
func TestArrowWatchLayout(t *testing.T) {
	row := layoutRow{Hash: [20]byte{1}, Small: 2, Tags: []string{strings.Repeat("t", 300)}, Name: strings.Repeat("n", 500),
		Files: []layoutFile{{Path: strings.Repeat("p", 700), Raw: bytes.Repeat([]byte("r"), 900), Size: 3},
			{Path: strings.Repeat("p", 700), Raw: bytes.Repeat([]byte("r"), 900), Size: 4}},
		Flag: true, Ms: new(int64(5)), At: 6, Blob: bytes.Repeat([]byte("b"), 1100), Note: strings.Repeat("o", 1300)}
	sizes := map[string]int64{"tags.list.element": 300, "name": 500, "files.list.element.path": 700,
		"files.list.element.raw": 900, "blob": 1100, "note": 1300}
	for _, codec := range []string{"", "zstd"} {
		stream := codecStream(t, codec, []layoutRow{row})
		for col, size := range sizes {
			bound := func(max int64) Limits {
				lim := DefaultLimits()
				lim.MaxValueBytes = func(path []string) int64 {
					if strings.Join(path, ".") == col {
						return max
					}
					return 0
				}
				return lim
			}
			t.Run(fmt.Sprintf("%s/%s", col, codec), func(t *testing.T) {
				if _, err := readArrowLimited[layoutRow](stream, bound(size)); err != nil {
					t.Fatalf("at its size: %v", err)
				}
				_, err := readArrowLimited[layoutRow](stream, bound(size-100))
				if got, ok := errors.AsType[*ValueLimitError](err); !ok || got.Column != col {
					t.Fatalf("under its size: err = %v, want column %s refused", err, col)
				}
			})
		}
	}
}

// TestArrowValueLimitLengths: a batch that declares more values than
// exist makes no bound that overflows: a column of a row's is bounded by
// the rows a batch may have, a list's values by what fits in an int64.
func TestArrowValueLimitLengths(t *testing.T) {
	const vcap = 10 << 20
	tests := []struct {
		name   string
		path   []string
		values int64
		size   int64
		over   bool
	}{
		{"a row's, 2^62 values", []string{"val"}, 1 << 62, 1 << 30, false},
		{"a row's, over what the rows allowed hold", []string{"val"}, 1 << 62, DefaultLimits().MaxRowGroupRows*vcap + 65, true},
		{"a list's, 2^62 values", []string{"files", "list", "element", "path"}, 1 << 62, 1 << 62, false},
		{"a list's, no values", []string{"files", "list", "element", "path"}, 0, 65, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &framedReader{lim: DefaultLimits(), watch: []watchedColumn{{path: tt.path, vcap: vcap}}}
			err := g.overBound(&batchWatch{rows: tt.values, sizes: []int64{tt.size}, values: []int64{tt.values}, levels: []int64{tt.values}})
			if (err != nil) != tt.over {
				t.Fatalf("err = %v, want refused: %v", err, tt.over)
			}
		})
	}
}
