package rowio

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// nRow has the narrow integer fields the schema has (a result's attempt,
// a job's hash_type, a file_count), read from wider or unsigned columns.
type nRow struct {
	A int32   `parquet:"a"`
	B int8    `parquet:"b,int(8)"`
	C *int32  `parquet:"c,optional"`
	L []nElem `parquet:"l,list"`
}

type nElem struct {
	X int8 `parquet:"x,int(8)"`
}

type nInt interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// nFile is nRow as a file or stream of the column types A, B, C and X
// holds it.
type nFile[A, B, C, X nInt] struct {
	A A           `parquet:"a"`
	B B           `parquet:"b"`
	C *C          `parquet:"c,optional"`
	L []nFileX[X] `parquet:"l,list"`
}

type nFileX[X nInt] struct {
	X X `parquet:"x"`
}

// nVals is a row's values (a uint64 past int64 as its bits); C is null
// when noC.
type nVals struct {
	A, B, C, X int64
	noC        bool
}

// nInput writes rows of vals as a Parquet file in dir (none when
// arrowOnly) and as an Arrow IPC stream of the same column types.
func nInput[A, B, C, X nInt](arrowOnly bool) func(t *testing.T, dir string, vals []nVals) (string, []byte) {
	return func(t *testing.T, dir string, vals []nVals) (string, []byte) {
		t.Helper()
		rows := make([]nFile[A, B, C, X], len(vals))
		for i, v := range vals {
			rows[i] = nFile[A, B, C, X]{A: A(v.A), B: B(v.B), L: []nFileX[X]{{1}, {X(v.X)}}}
			if !v.noC {
				c := C(v.C)
				rows[i].C = &c
			}
		}
		p := ""
		if !arrowOnly {
			p = filepath.Join(dir, "n.parquet")
			if err := writeRowsTo(p, rows); err != nil {
				t.Fatal(err)
			}
		}
		typ := func(v any) arrow.DataType {
			return arrowIntTypes[reflect.TypeOf(v).Kind()]
		}
		var zero nFile[A, B, C, X]
		var x X
		sch := arrow.NewSchema([]arrow.Field{
			{Name: "a", Type: typ(zero.A)},
			{Name: "b", Type: typ(zero.B)},
			{Name: "c", Type: typ(*new(C)), Nullable: true},
			{Name: "l", Type: arrow.ListOfNonNullable(arrow.StructOf(arrow.Field{Name: "x", Type: typ(x)}))},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		defer b.Release()
		for _, r := range rows {
			appendInt(b.Field(0), r.A)
			appendInt(b.Field(1), r.B)
			if r.C == nil {
				b.Field(2).AppendNull()
			} else {
				appendInt(b.Field(2), *r.C)
			}
			lb := b.Field(3).(*array.ListBuilder)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			lb.Append(true)
			for _, e := range r.L {
				sb.Append(true)
				appendInt(sb.FieldBuilder(0), e.X)
			}
		}
		rec := b.NewRecord()
		defer rec.Release()
		return p, rowiotest.ArrowStream(t, rec)
	}
}

var arrowIntTypes = map[reflect.Kind]arrow.DataType{
	reflect.Int8: arrow.PrimitiveTypes.Int8, reflect.Int16: arrow.PrimitiveTypes.Int16,
	reflect.Int32: arrow.PrimitiveTypes.Int32, reflect.Int64: arrow.PrimitiveTypes.Int64,
	reflect.Uint8: arrow.PrimitiveTypes.Uint8, reflect.Uint16: arrow.PrimitiveTypes.Uint16,
	reflect.Uint32: arrow.PrimitiveTypes.Uint32, reflect.Uint64: arrow.PrimitiveTypes.Uint64,
}

// appendInt appends v to b, a builder of v's type.
func appendInt[V nInt](b array.Builder, v V) {
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v))
	case *array.Int16Builder:
		b.Append(int16(v))
	case *array.Int32Builder:
		b.Append(int32(v))
	case *array.Int64Builder:
		b.Append(int64(v))
	case *array.Uint8Builder:
		b.Append(uint8(v))
	case *array.Uint16Builder:
		b.Append(uint16(v))
	case *array.Uint32Builder:
		b.Append(uint32(v))
	case *array.Uint64Builder:
		b.Append(uint64(v))
	}
}

// readN reads every row of r: two, then the rest (so that the third row
// is counted across two Reads).
func readN(r *Reader[nRow]) ([]nRow, error) {
	defer r.Close()
	first := make([]nRow, 2)
	n, err := r.Read(first)
	if err != nil {
		return first[:n], err
	}
	rest, err := r.ReadAll()
	return append(first[:n], rest...), err
}

// TestNarrowIntColumns: a value of a wider or unsigned integer column
// past the int32 or int8 field it is read into (a UINTEGER attempt of
// 2^32-1, a SMALLINT hash_type of 300) is an IntRangeError naming the
// column, the row and the value as stored, from a Parquet file and from
// an Arrow stream alike. parquet-go read a UINTEGER's bits (-1) and kept
// an int8's low byte (300 as 44); the Arrow reader kept the low bits of
// an int64, uint32 or uint64 one. Values the field holds read as they are.
func TestNarrowIntColumns(t *testing.T) {
	ok := nVals{A: 7, B: 1, C: 5, X: 2}
	tests := []struct {
		name  string
		input func(t *testing.T, dir string, vals []nVals) (string, []byte)
		bad   nVals // the third row
		want  string
	}{
		{"uint32 max into int32", nInput[uint32, int8, int32, int8](false), nVals{A: math.MaxUint32, B: 1, C: 5},
			`column "a" row 3: 4294967295 is outside int32`},
		{"uint32 2^31 into *int32", nInput[int32, int8, uint32, int8](false), nVals{A: 1, B: 1, C: 1 << 31},
			`column "c" row 3: 2147483648 is outside int32`},
		{"int16 300 into int8", nInput[int32, int16, int32, int8](false), nVals{A: 1, B: 300, noC: true},
			`column "b" row 3: 300 is outside int8`},
		{"int32 -129 into int8", nInput[int32, int32, int32, int8](false), nVals{A: 1, B: -129, C: 1},
			`column "b" row 3: -129 is outside int8`},
		{"uint8 200 into int8", nInput[int32, uint8, int32, int8](false), nVals{A: 1, B: 200, C: 1},
			`column "b" row 3: 200 is outside int8`},
		{"uint32 128 into a list's int8", nInput[int32, int8, int32, uint32](false), nVals{A: 1, B: 1, C: 1, X: 128},
			`column "l.x" row 3: 128 is outside int8`},
		{"in range", nInput[uint32, int16, uint32, uint8](false), nVals{A: math.MaxInt32, B: -128, C: 0, X: 127}, ""},
		{"int64 2^32+5 into int32", nInput[int64, int8, int32, int8](false), nVals{A: 1<<32 + 5, B: 1, C: 1},
			`column "a" row 3: 4294967301 is outside int32`},
		{"int64 min into *int32", nInput[int32, int8, int64, int8](false), nVals{A: 1, B: 1, C: math.MinInt64},
			`column "c" row 3: -9223372036854775808 is outside int32`},
		{"uint64 max into int8", nInput[int32, uint64, int32, int8](false), nVals{A: 1, B: -1, C: 1},
			`column "b" row 3: 18446744073709551615 is outside int8`},
		{"uint64 2^31 into int32", nInput[uint64, int8, int32, int8](false), nVals{A: 1 << 31, B: 1, C: 1},
			`column "a" row 3: 2147483648 is outside int32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, stream := tt.input(t, t.TempDir(), []nVals{ok, ok, tt.bad, ok})
			errs := map[string]error{}
			var got []nRow
			if p != "" {
				r, err := Open[nRow](p, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, errs[p] = readN(r)
			}
			r, err := OpenArrow[nRow]("n.arrow", bytes.NewReader(stream))
			if err != nil {
				t.Fatal(err)
			}
			agot, aerr := readN(r)
			errs["n.arrow"] = aerr
			if tt.want == "" {
				for _, rows := range [][]nRow{got, agot} {
					if len(rows) != 4 || rows[2].A != math.MaxInt32 || rows[2].B != -128 || rows[2].C == nil ||
						*rows[2].C != 0 || rows[2].L[1].X != 127 || *rows[3].C != 5 {
						t.Fatalf("read %+v", rows)
					}
				}
			}
			for name, err := range errs {
				if tt.want == "" {
					if err != nil {
						t.Fatalf("%s: %v; want no error", name, err)
					}
					continue
				}
				if err == nil || err.Error() != name+": "+tt.want {
					t.Fatalf("got %v, want %s: %s", err, name, tt.want)
				}
				if _, ok := errors.AsType[*IntRangeError](err); !ok {
					t.Fatalf("%s: %T, want an IntRangeError", name, err)
				}
			}
			if tt.want != "" && (p != "" && len(got) != 2 || len(agot) != 2) {
				t.Fatalf("read %d rows from Parquet, %d from Arrow before the error, want 2", len(got), len(agot))
			}
		})
	}
}
