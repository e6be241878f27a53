package rowio

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestMisread: misread finds the runs parquet-go v0.32.0's null bitmap
// scan misreads (y values from offset y, then nulls, with rows after
// them) and passes the others.
func TestMisread(t *testing.T) {
	for _, tc := range []struct {
		name string
		mask uint64 // bit i: row i has a value
		n    int
		want int
	}{
		{"null value null null", 0b0010, 4, 2},
		{"run ends the batch", 0b10, 2, 2},
		{"two nulls two values then nulls", 0b1100, 7, 4},
		{"value first", 0b101, 5, 5},
		{"run longer than its offset", 0b1110, 8, 8},
		{"second run misread", 0b1100_0000_0001, 13, 13},
		{"second run at 6 of 6", 0b1111_1100_0001, 20, 12},
		{"all nulls", 0, 64, 64},
		{"all values", ^uint64(0), 64, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := misread(tc.mask, tc.n); got != tc.want {
				t.Fatalf("misread(%b, %d) = %d, want %d", tc.mask, tc.n, got, tc.want)
			}
		})
	}
}

// TestBatchedOptionalRows: rows with sparse and dense optional columns,
// written by ParquetWriter in batches across row groups, read back as
// they were written (a null stays a null, a value its value). The
// patterned cases hold runs that parquet-go misreads in a batch: y values
// from offset y of a 64-row call, or of the part of a call that a row
// group's end leaves (60-row groups: a value at 57 of a word is at 1 of
// the part from 56).
func TestBatchedOptionalRows(t *testing.T) {
	inRun := func(i, lo, hi int) bool { return i%64 >= lo && i%64 < hi }
	for _, tc := range []struct {
		name    string
		density float64 // chance of a value in each optional column (0: pattern)
		group   int64
		call    int // rows a Write call
		pattern func(i, col int) bool
	}{
		{"runs at their offsets", 0, 1 << 20, 5000, func(i, col int) bool {
			run := [][2]int{{30, 60}, {2, 4}, {1, 2}, {5, 10}}[col] // b, t, s, i
			return inRun(i, run[0], run[1])
		}},
		{"run past a group's end", 0, 60, 5000, func(i, col int) bool { return i%64 == 57 }},
		{"sparse", 0.03, 1000, 333, nil},
		{"half", 0.5, 777, 333, nil},
		{"dense", 0.97, 64, 333, nil},
		{"sparse small groups", 0.05, 10, 333, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.group)))
			has := func(i, col int) bool {
				if tc.pattern != nil {
					return tc.pattern(i, col)
				}
				return r.Float64() < tc.density
			}
			rows := make([]optRow, 5000)
			for i := range rows {
				rows[i] = optRow{K: int64(i), Rq: "r"}
				if has(i, 0) {
					rows[i].B = []byte{byte(i)}
				}
				if has(i, 1) {
					rows[i].T = int64(i) + 1
				}
				if has(i, 2) {
					rows[i].S = "x"
				}
				if has(i, 3) {
					rows[i].I = int32(i) + 1
				}
			}
			var buf bytes.Buffer
			w := NewParquetWriter[optRow](&buf, parquet.MaxRowsPerRowGroup(tc.group))
			for i := 0; i < len(rows); i += tc.call {
				if _, err := w.Write(rows[i:min(i+tc.call, len(rows))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := parquet.Read[optRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rows) {
				t.Fatal("the rows read back differ from those written")
			}
			// A zero read back is a null or a zero value: the levels tell.
			present := map[string]func(optRow) bool{
				"b": func(r optRow) bool { return r.B != nil }, "t": func(r optRow) bool { return r.T != 0 },
				"s": func(r optRow) bool { return r.S != "" }, "i": func(r optRow) bool { return r.I != 0 },
			}
			for name, vals := range columnValues(t, buf.Bytes()) {
				if present[name] == nil {
					continue
				}
				for i, v := range vals {
					if v.IsNull() == present[name](rows[i]) {
						t.Fatalf("column %s row %d: null %v, want %v", name, i, v.IsNull(), !v.IsNull())
					}
				}
			}
		})
	}
}

// columnValues reads every value of each top-level column of a Parquet
// file, row group after row group.
func columnValues(t *testing.T, data []byte) map[string][]parquet.Value {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]parquet.Value{}
	for _, rg := range f.RowGroups() {
		for ci, c := range rg.ColumnChunks() {
			name := f.Schema().Columns()[ci][0]
			pages := c.Pages()
			for {
				p, err := pages.ReadPage()
				if err != nil {
					break
				}
				v := make([]parquet.Value, p.NumValues())
				n, _ := p.Values().ReadValues(v)
				for _, x := range v[:n] {
					out[name] = append(out[name], x.Clone())
				}
			}
			pages.Close()
		}
	}
	return out
}
