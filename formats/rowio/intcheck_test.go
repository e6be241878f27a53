package rowio

import (
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestOverflowColumns: the columns named are those whose values may be
// past the field they are read into, by the column's type alone: a
// UINTEGER for an int32, anything but a TINYINT for an int8, a UBIGINT
// for an int64; a type whose values the field always holds is not named.
func TestOverflowColumns(t *testing.T) {
	type fields struct {
		A int32 `parquet:"a"`
		B int8  `parquet:"b,int(8)"`
		C int64 `parquet:"c"`
	}
	tests := []struct {
		name   string
		schema *parquet.Schema
		want   []string
	}{
		{"the fields' own types", parquet.SchemaOf(fields{}), nil},
		{"unsigned 32 and 64 bits", parquet.SchemaOf(struct {
			A uint32 `parquet:"a"`
			B int8   `parquet:"b,int(8)"`
			C uint64 `parquet:"c"`
		}{}), []string{"a", "c"}},
		{"narrower unsigned", parquet.SchemaOf(struct {
			A uint16 `parquet:"a"`
			B uint8  `parquet:"b"`
			C uint32 `parquet:"c"`
		}{}), []string{"b"}},
		{"a plain INT32 into an int8", parquet.SchemaOf(struct {
			A int16 `parquet:"a"`
			B int32 `parquet:"b"`
		}{}), []string{"b"}},
		{"INT64 and UBIGINT into an int32 and an int8", parquet.SchemaOf(struct {
			A int64  `parquet:"a"`
			B uint64 `parquet:"b"`
		}{}), []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OverflowColumns[fields](tt.schema); !slices.Equal(got, tt.want) {
				t.Fatalf("OverflowColumns = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInt32Past: a value of an INT32 column is judged and reported as
// the file holds it, an unsigned column's as its uint32.
func TestInt32Past(t *testing.T) {
	tests := []struct {
		name     string
		v        int32
		unsigned bool
		toInt8   bool
		want     string // "" for a value the field holds
	}{
		{"INT32 -1 into int8", -1, false, true, ""},
		{"INT32 300 into int8", 300, false, true, `column "c" row 8: 300 is outside int8`},
		{"INT32 -129 into int8", -129, false, true, `column "c" row 8: -129 is outside int8`},
		{"UINTEGER 127 into int8", 127, true, true, ""},
		{"UINTEGER 2^32-1 into int8", -1, true, true, `column "c" row 8: 4294967295 is outside int8`},
		{"UINTEGER 2^32-296 into int8", -296, true, true, `column "c" row 8: 4294967000 is outside int8`},
		{"INT32 min into int32", -1 << 31, false, false, ""},
		{"UINTEGER 2^31-1 into int32", 1<<31 - 1, true, false, ""},
		{"UINTEGER 2^31 into int32", -1 << 31, true, false, `column "c" row 8: 2147483648 is outside int32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Int32Past("c", 7, tt.v, tt.unsigned, tt.toInt8)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%v, want nil", err)
				}
				return
			}
			if _, ok := errors.AsType[*IntRangeError](err); !ok || err.Error() != tt.want {
				t.Fatalf("%v, want IntRangeError %q", err, tt.want)
			}
		})
	}
}

// TestInt64Past: a value of an INT64 column is judged and reported as the
// file holds it, an unsigned column's as its uint64.
func TestInt64Past(t *testing.T) {
	tests := []struct {
		name     string
		v        int64
		unsigned bool
		toInt8   bool
		want     string // "" for a value the field holds
	}{
		{"INT64 int32 min into int32", math.MinInt32, false, false, ""},
		{"INT64 int32 max into int32", math.MaxInt32, false, false, ""},
		{"INT64 2^31 into int32", 1 << 31, false, false, `column "c" row 8: 2147483648 is outside int32`},
		{"INT64 -2^31-1 into int32", math.MinInt32 - 1, false, false, `column "c" row 8: -2147483649 is outside int32`},
		{"INT64 2^40 into int32", 1 << 40, false, false, `column "c" row 8: 1099511627776 is outside int32`},
		{"UBIGINT 65535 into int32", 65535, true, false, ""},
		{"UBIGINT 2^64-1 into int32", -1, true, false, `column "c" row 8: 18446744073709551615 is outside int32`},
		{"INT64 -128 into int8", -128, false, true, ""},
		{"INT64 128 into int8", 128, false, true, `column "c" row 8: 128 is outside int8`},
		{"UBIGINT 2^63 into int8", math.MinInt64, true, true, `column "c" row 8: 9223372036854775808 is outside int8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Int64Past("c", 7, tt.v, tt.unsigned, tt.toInt8)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%v, want nil", err)
				}
				return
			}
			if _, ok := errors.AsType[*IntRangeError](err); !ok || err.Error() != tt.want {
				t.Fatalf("%v, want IntRangeError %q", err, tt.want)
			}
		})
	}
}

// TestIntCheckWide: rows read by parquet-go itself from INT64 and
// UBIGINT columns into int32 and int8 fields (which Reader refuses, but
// a reader of its own may take) are checked by value: parquet-go keeps a
// value's low bits (2^40 reads as 0), and IntCheck refuses one past the
// field, naming the column, the row and the value the file holds.
func TestIntCheckWide(t *testing.T) {
	ok := nVals{A: 7, B: 1, C: 5, X: 2}
	tests := []struct {
		name  string
		input func(t *testing.T, dir string, vals []nVals) (string, []byte)
		bad   nVals // the third row
		want  string
	}{
		{"INT64 2^40 into int32", nInput[int64, int8, int32, int8](false), nVals{A: 1 << 40, B: 1, C: 1},
			`column "a" row 3: 1099511627776 is outside int32`},
		{"INT64 -2^31-1 into *int32", nInput[int32, int8, int64, int8](false), nVals{A: 1, B: 1, C: math.MinInt32 - 1},
			`column "c" row 3: -2147483649 is outside int32`},
		{"UBIGINT 2^64-1 into int32", nInput[uint64, int8, int32, int8](false), nVals{A: -1, B: 1, C: 1},
			`column "a" row 3: 18446744073709551615 is outside int32`},
		{"INT64 300 into int8", nInput[int32, int64, int32, int8](false), nVals{A: 1, B: 300, C: 1},
			`column "b" row 3: 300 is outside int8`},
		{"in range", nInput[int64, int64, uint64, int8](false), nVals{A: math.MaxInt32, B: -128, C: 0, X: 127}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := tt.input(t, t.TempDir(), []nVals{ok, ok, tt.bad, ok})
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				t.Fatal(err)
			}
			r := parquet.NewGenericReader[nRow](pf)
			defer r.Close()
			rows := make([]nRow, 4)
			if n, err := r.Read(rows); n != 4 {
				t.Fatalf("read %d rows: %v", n, err)
			}
			ints := NewIntCheck[nRow](pf)
			defer ints.Close()
			k, err := ints.Check(rows)
			if tt.want == "" {
				if err != nil || k != 4 {
					t.Fatalf("Check = %d, %v; want 4, nil", k, err)
				}
				if rows[2].A != math.MaxInt32 || rows[2].B != -128 || rows[2].C == nil || *rows[2].C != 0 {
					t.Fatalf("read %+v", rows[2])
				}
				return
			}
			if _, ok := errors.AsType[*IntRangeError](err); !ok || err.Error() != tt.want || k != 2 {
				t.Fatalf("Check = %d, %v; want 2, IntRangeError %q", k, err, tt.want)
			}
		})
	}
}
