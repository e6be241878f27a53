package statecol

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestBulkReaders: Codes, Int64s and Int32s read every column they take
// as the callback readers (String, Int64, Int32) do, from infohash's
// writer and from parquet-go's, required and optional columns, with
// nulls, dictionary-encoded strings and PLAIN ones (lease_id with more
// distinct values than a dictionary takes); and Int64Bounds gives the
// bounds of a required integer column's values, and none for an optional
// one.
func TestBulkReaders(t *testing.T) {
	rows := randomStates(20000, 5, true)
	for _, w := range []struct {
		name string
		open func(t *testing.T) *File
	}{
		{"statecol", func(t *testing.T) *File { f, _ := openStateFile(t, rows); return f }},
		{"parquet-go", func(t *testing.T) *File {
			p := filepath.Join(t.TempDir(), "s.parquet")
			pw, err := rowio.Create[schema.State](p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := pw.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := Open(rowio.UnrecordedFile(p))
			if err != nil {
				t.Fatal(err)
			}
			return f
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			f := w.open(t)
			defer f.Close()
			for _, rg := range f.RowGroups() {
				n := int(rg.NumRows())
				col := func(name string) parquet.ColumnChunk {
					c, _ := f.Column(rg, name)
					return c
				}
				for _, name := range []string{"tier", "metadata_status", "last_failure", "lease_id"} {
					codes := map[string]uint8{}
					code := func(s string) uint8 {
						if _, ok := codes[s]; !ok {
							codes[s] = uint8(len(codes))
						}
						return codes[s]
					}
					want := make([]uint8, n)
					if err := String(col(name), n, func(i int, s string) { want[i] = code(s) }); err != nil {
						t.Fatal(err)
					}
					got := make([]uint8, n)
					if err := Codes(col(name), got, code); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: codes differ from the strings' (%d codes)", name, len(codes))
					}
				}
				for _, name := range []string{"last_seen", "next_retry", "lease_until"} {
					want := make([]int64, n)
					if err := Int64(col(name), n, func(i int, v int64) { want[i] = v }); err != nil {
						t.Fatal(err)
					}
					got := make([]int64, n)
					if err := Int64s(col(name), got); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: Int64s differs from Int64", name)
					}
					lo, hi, ok := Int64Bounds(col(name), int64(n))
					if required := name == "last_seen"; ok != required || ok && (lo != slices.Min(want) || hi != slices.Max(want)) {
						t.Errorf("%s: bounds %d..%d (%v), values %d..%d", name, lo, hi, ok, slices.Min(want), slices.Max(want))
					}
				}
				want := make([]int32, n)
				if err := Int32(col("attempts"), n, func(i int, v int32) { want[i] = v }); err != nil {
					t.Fatal(err)
				}
				got := make([]int32, n)
				if err := Int32s(col("attempts"), got); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("attempts: Int32s differs from Int32")
				}
				if lo, hi, ok := Int64Bounds(col("attempts"), int64(n)); !ok || lo != int64(slices.Min(want)) || hi != int64(slices.Max(want)) {
					t.Errorf("attempts: bounds %d..%d (%v), values %d..%d", lo, hi, ok, slices.Min(want), slices.Max(want))
				}
				if err := Int64s(col("last_seen"), make([]int64, n-1)); err == nil {
					t.Errorf("Int64s into a row short: no error")
				}
			}
		})
	}
}
