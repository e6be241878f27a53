package rowio

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// wRow has int64 fields (a result's metadata_size, total_ms, a file's
// length), one a timestamp, and an int32 one (attempt).
type wRow struct {
	A int64  `parquet:"a"`
	P *int64 `parquet:"p,optional"`
	T int64  `parquet:"t,timestamp(millisecond)"`
	N int32  `parquet:"n"`
	L []wEl  `parquet:"l,list"`
}

type wEl struct {
	X int64 `parquet:"x"`
}

// wFile is a wRow as a file of the column types A, P, T, N and X.
type wFile[A, P, T, N, X any] struct {
	A A         `parquet:"a"`
	P *P        `parquet:"p,optional"`
	T T         `parquet:"t"`
	N N         `parquet:"n"`
	L []wFEl[X] `parquet:"l,list"`
}

type wFEl[X any] struct {
	X X `parquet:"x"`
}

// wInput writes row as a wFile of its field types in dir.
func wInput[A, P, T, N, X any](a A, p P, tv T, n N, x X) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		t.Helper()
		path := filepath.Join(dir, "w.parquet")
		if err := writeRowsTo(path, []wFile[A, P, T, N, X]{{A: a, P: &p, T: tv, N: n, L: []wFEl[X]{{x}}}}); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// TestIntColumnsOfTheOtherWidth: an integer column of the other width
// than its field's (INT32 for an int64 field, INT64 for an int32 one), as
// DuckDB writes a query's INTEGER literal or BIGINT count(*), is read by
// value, as the Arrow reader reads it (an INT64's value past an int32
// field is refused by value: TestNarrowIntColumns). It was wrong schema
// ('column "a" is INT32, want INT64'). A column that is no plain integer
// (a DATE, a TIMESTAMP) is still refused, and so are an INT32 for a
// timestamp field (no time in ms fits one) and a UINTEGER for an int64
// one (parquet-go widens 2^32-1 to -1).
func TestIntColumnsOfTheOtherWidth(t *testing.T) {
	const ts = 1767225600123
	tests := []struct {
		name  string
		input func(t *testing.T, dir string) string
		want  wRow
		err   string
	}{
		{name: "int32 into int64", input: wInput(int32(-5), int32(math.MaxInt32), int64(ts), int32(3), int32(-7)),
			want: wRow{A: -5, P: new(int64(math.MaxInt32)), T: ts, N: 3, L: []wEl{{-7}}}},
		{name: "uint32 into int64", input: wInput(int64(1), uint32(math.MaxUint32), int64(ts), int32(3), int64(4)),
			err: `column "p" is INT32, want INT64`}, // parquet-go would read 2^32-1 as -1
		{name: "int16 and uint16 into int64, int64 into int32", input: wInput(int16(-300), uint16(65535), int64(ts), int64(1<<31-1), uint16(9)),
			want: wRow{A: -300, P: new(int64(65535)), T: ts, N: 1<<31 - 1, L: []wEl{{9}}}},
		{name: "int32 for a timestamp", input: wInput(int64(1), int64(2), int32(1000), int32(3), int64(4)),
			err: `column "t" is INT32, want INT64`},
		{name: "int64 timestamp column for int32 n", input: func(t *testing.T, dir string) string {
			t.Helper()
			type tsN struct {
				A int64 `parquet:"a"`
				T int64 `parquet:"t,timestamp(millisecond)"`
				N int64 `parquet:"n,timestamp(millisecond)"`
			}
			path := filepath.Join(dir, "w.parquet")
			if err := writeRowsTo(path, []tsN{{1, ts, ts}}); err != nil {
				t.Fatal(err)
			}
			return path
		}, err: `column "n" is INT64, want INT32`},
		{name: "a date for an int64", input: func(t *testing.T, dir string) string {
			t.Helper()
			type dateA struct {
				A int32 `parquet:"a,date"`
				T int64 `parquet:"t,timestamp(millisecond)"`
				N int32 `parquet:"n"`
			}
			path := filepath.Join(dir, "w.parquet")
			if err := writeRowsTo(path, []dateA{{20000, ts, 1}}); err != nil {
				t.Fatal(err)
			}
			return path
		}, err: `column "a" is INT32, want INT64`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.input(t, t.TempDir())
			r, err := Open[wRow](p, nil)
			var got []wRow
			if err == nil {
				got, err = r.ReadAll()
				r.Close()
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v (rows %+v), want an error with %q", err, got, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d rows, want 1", len(got))
			}
			g, w := got[0], tt.want
			if g.A != w.A || g.P == nil || *g.P != *w.P || g.T != w.T || g.N != w.N || len(g.L) != 1 || g.L[0] != w.L[0] {
				t.Fatalf("read %+v (p %v), want %+v (p %v)", g, *g.P, w, *w.P)
			}
		})
	}
}
