package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/rle"
)

type blobRow struct {
	ID  int64  `parquet:"id"`
	Val []byte `parquet:"val,optional"`
}

// capVal bounds column val's values at n bytes.
func capVal(n int64) Limits {
	lim := DefaultLimits()
	lim.MaxValueBytes = func(path []string) int64 {
		if slices.Equal(path, []string{"val"}) {
			return n
		}
		return 0
	}
	return lim
}

// TestValueLimit: a page of a column with a bound on its values is
// refused from its header when it declares more than its values (not
// its nulls) could take at the bound each, and only then: a page of
// many values within the bound passes, however large, in v1 pages
// (nulls counted from the definition levels) and v2 ones (from the
// header).
func TestValueLimit(t *testing.T) {
	const big = 200 << 10
	one := func(nulls int) []blobRow { // nulls, then one value of big bytes
		rows := make([]blobRow, nulls+1)
		for i := range rows {
			rows[i].ID = int64(i)
		}
		rows[nulls].Val = bytes.Repeat([]byte("v"), big)
		return rows
	}
	many := make([]blobRow, 400) // 400 values of 1000 bytes: one page of 400 KB
	for i := range many {
		many[i] = blobRow{ID: int64(i), Val: bytes.Repeat([]byte{byte(i)}, 1000)}
	}
	tests := []struct {
		name  string
		rows  []blobRow
		limit Limits
		want  *ValueLimitError // nil: accepted
	}{
		{"no bound", one(0), DefaultLimits(), nil},
		{"at the bound", one(0), capVal(big), nil},
		// The bound leaves room for a value's length and a page's levels
		// and headers (valueBound): a value a few bytes over it passes
		// here, and the caller checks its length.
		{"just over the bound", one(0), capVal(big - 1), nil},
		{"over the bound and its slack", one(0), capVal(big - 2048), &ValueLimitError{Column: "val", FirstRow: 1, Rows: 1, Values: 1, Limit: big - 2048}},
		{"half the bound", one(0), capVal(big / 2), &ValueLimitError{Column: "val", FirstRow: 1, Rows: 1, Values: 1, Limit: big / 2}},
		// 999 nulls take no value bytes: the page is one value's.
		{"one value among nulls", one(999), capVal(big / 2), &ValueLimitError{Column: "val", FirstRow: 1, Rows: 1000, Values: 1, Limit: big / 2}},
		{"one value among nulls, at the bound", one(999), capVal(big), nil},
		{"many values at the bound", many, capVal(1000), nil},
		{"many values over it", many, capVal(900), &ValueLimitError{Column: "val", FirstRow: 1, Rows: 400, Values: 400, Limit: 900}},
	}
	for _, version := range []int{1, 2} {
		for _, tt := range tests {
			t.Run(tt.name+"/v"+string(rune('0'+version)), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "b.parquet")
				w, err := Create[blobRow](path, nil, parquet.DataPageVersion(version), parquet.PageBufferSize(1<<20))
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Write(tt.rows); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				r, err := OpenLimited[blobRow](path, tt.limit)
				if tt.want == nil {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					r.Close()
					return
				}
				if err == nil {
					r.Close()
					t.Fatal("accepted")
				}
				got, ok := errors.AsType[*ValueLimitError](err)
				if !ok || !errors.Is(err, ErrLimit) {
					t.Fatalf("err = %v, want a ValueLimitError", err)
				}
				if got.Bytes <= valueBound(got.Rows, got.Values, got.Limit) {
					t.Errorf("page of %d bytes refused within the bound", got.Bytes)
				}
				g := *got
				g.Bytes = 0
				if g != *tt.want {
					t.Fatalf("err = %+v, want %+v", g, *tt.want)
				}
			})
		}
	}
}

type dictRow struct {
	Val []byte `parquet:"val,optional,dict"`
}

// TestValueLimitDictionary: a dictionary page holds the distinct values,
// each within the bound; one over it is refused naming its row group (its
// entries are no rows).
func TestValueLimitDictionary(t *testing.T) {
	var b bytes.Buffer
	w := NewParquetWriter[dictRow](&b)
	for _, rows := range [][]dictRow{{{Val: []byte("small")}}, {{Val: bytes.Repeat([]byte("a"), 8000)}, {Val: bytes.Repeat([]byte("b"), 9000)}}} {
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil { // a row group each
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "d.parquet")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := OpenLimited[dictRow](path, capVal(9000)); err != nil {
		t.Fatalf("values within the bound: %v", err)
	} else {
		r.Close()
	}
	_, err := OpenLimited[dictRow](path, capVal(4000))
	got, ok := errors.AsType[*ValueLimitError](err)
	if !ok || got.RowGroup != 1 || got.Rows != 0 || got.Values != 2 {
		t.Fatalf("err = %v (%+v), want the dictionary page of row group 1 refused", err, got)
	}
}

func TestCountTop(t *testing.T) {
	run := func(count uint64, v byte) []byte { return append(binary.AppendUvarint(nil, count<<1), v) }
	packed := func(groups uint64, b ...byte) []byte { return append(binary.AppendUvarint(nil, groups<<1|1), b...) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name string
		runs []byte
		max  int
		nv   int64
		want int64
	}{
		{"one run of values", run(100, 1), 1, 100, 100},
		{"one run of nulls", run(100, 0), 1, 100, 0},
		{"runs", cat(run(40, 1), run(20, 0), run(40, 1)), 1, 100, 80},
		{"packed", packed(1, 0b1011_0001), 1, 8, 4},
		{"packed past the page", packed(2, 0xff, 0xff), 1, 11, 11},
		{"width 2", cat(run(3, 3), packed(1, 0b11_10_01_11, 0b00_11_11_00)), 3, 11, 3 + 4},
		{"width 2, RLE not the top", run(5, 2), 3, 5, 0},
		{"no levels", nil, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := walkLevels("definition", tt.runs, tt.max, tt.nv); err != nil {
				t.Fatalf("walkLevels: %v", err)
			}
			if got := countTop(tt.runs, tt.max, tt.nv); got != tt.want {
				t.Fatalf("countTop = %d, want %d", got, tt.want)
			}
		})
	}
}

// FuzzCountTop: countTop counts what parquet-go decodes, for levels
// walkLevels accepts.
func FuzzCountTop(f *testing.F) {
	f.Add([]byte{0x10, 1, 0x03, 0xb6}, uint8(1), uint16(12))
	f.Add([]byte{0x06, 3, 0x03, 0xb6, 0x1f}, uint8(3), uint16(11))
	f.Fuzz(func(t *testing.T, b []byte, max uint8, nv uint16) {
		max = max%7 + 1
		if walkLevels("definition", b, int(max), int64(nv)) != nil || len(b) == 0 {
			return
		}
		enc := rle.Encoding{BitWidth: bits.Len8(max)}
		levels, err := enc.DecodeLevels(nil, b)
		if err != nil {
			t.Fatalf("accepted levels do not decode: %v", err)
		}
		var want int64
		for _, l := range levels[:nv] {
			if l == max {
				want++
			}
		}
		if got := countTop(b, int(max), int64(nv)); got != want {
			t.Fatalf("countTop = %d, parquet-go decodes %d", got, want)
		}
	})
}
