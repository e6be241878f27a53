package rowio

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// uRow is read from columns of unsigned 64-bit integers: a plain int64,
// epoch ms, a pointer (nil is null), a field of an embedded struct and
// one of a list's structs.
type uRow struct {
	ID   int64  `parquet:"id"`
	At   int64  `parquet:"at,timestamp(millisecond)"`
	Took *int64 `parquet:"took,optional"`
	uEmbedded
	Failures []uFailure `parquet:"failures,list"`
}

type uFailure struct {
	At int64 `parquet:"at,timestamp(millisecond)"`
}

type uEmbedded struct {
	N int64 `parquet:"n"`
}

// uFile is uRow as a file of UBIGINT columns holds it (parquet-go's
// uint64: INT(64,false)); ID is signed.
type uFile struct {
	ID       int64          `parquet:"id"`
	At       uint64         `parquet:"at"`
	Took     *uint64        `parquet:"took,optional"`
	N        uint64         `parquet:"n"`
	Failures []uFileFailure `parquet:"failures,list"`
}

type uFileFailure struct {
	At uint64 `parquet:"at"`
}

// uStream is rows as an Arrow IPC stream of uint64 columns.
func uStream(t *testing.T, rows []uFile) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "at", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "took", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "failures", Type: arrow.ListOfNonNullable(arrow.StructOf(arrow.Field{Name: "at", Type: arrow.PrimitiveTypes.Uint64}))},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.Uint64Builder).Append(r.At)
		if r.Took == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Uint64Builder).Append(*r.Took)
		}
		b.Field(3).(*array.Uint64Builder).Append(r.N)
		lb := b.Field(4).(*array.ListBuilder)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		lb.Append(true)
		for _, f := range r.Failures {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Uint64Builder).Append(f.At)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return rowiotest.ArrowStream(t, rec)
}

// readU reads every row of r: two, then the rest (so that the third row
// is counted across two Reads).
func readU(r *Reader[uRow]) ([]uRow, error) {
	defer r.Close()
	first := make([]uRow, 2)
	n, err := r.Read(first)
	if err != nil {
		return first[:n], err
	}
	rest, err := r.ReadAll()
	return append(first[:n], rest...), err
}

// TestUnsignedParquetColumns: a Parquet UBIGINT value past int64, read
// into an int64 field (merge's attempted_at, fetch's lease_until), is an
// IntRangeError showing the value as stored, in the words an Arrow uint64
// one gets, naming its column and row in the file. It was read as the
// negative int64 its bits make: 2^64-1 as -1 (an attempted_at merge
// called "missing", a lease that ended in 1969). Values up to 2^63-1 and
// nulls are read as they are.
func TestUnsignedParquetColumns(t *testing.T) {
	took := func(v uint64) *uint64 { return &v }
	ok := uFile{ID: -1, At: 1_767_225_600_000, Took: took(5), N: 7, Failures: []uFileFailure{{1}, {2}}}
	tests := []struct {
		name string
		bad  uFile // the third row
		want string
	}{
		{"epoch ms 2^64-1", uFile{ID: 1, At: math.MaxUint64, N: 7}, `column "at" row 3: 18446744073709551615 is more than an int64 holds`},
		{"epoch ms 2^63", uFile{ID: 1, At: 1 << 63, N: 7}, `column "at" row 3: 9223372036854775808 is more than an int64 holds`},
		{"pointer 2^64-1", uFile{ID: 1, At: 1, Took: took(math.MaxUint64), N: 7},
			`column "took" row 3: 18446744073709551615 is more than an int64 holds`},
		{"embedded 2^63", uFile{ID: 1, At: 1, N: 1 << 63}, `column "n" row 3: 9223372036854775808 is more than an int64 holds`},
		{"list's second struct 2^64-1", uFile{ID: 1, At: 1, N: 7, Failures: []uFileFailure{{1}, {math.MaxUint64}}},
			`column "failures.at" row 3: 18446744073709551615 is more than an int64 holds`},
		{"2^63-1 and null", uFile{ID: 1, At: math.MaxInt64, N: math.MaxInt64, Failures: []uFileFailure{{math.MaxInt64}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := []uFile{ok, ok, tt.bad, ok}
			p := filepath.Join(t.TempDir(), "u.parquet")
			if err := writeRowsTo(p, rows); err != nil {
				t.Fatal(err)
			}
			pr, err := Open[uRow](p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, perr := readU(pr)
			ar, err := OpenArrow[uRow]("u.parquet", bytes.NewReader(uStream(t, rows)))
			if err != nil {
				t.Fatal(err)
			}
			_, aerr := readU(ar)
			if tt.want == "" {
				if perr != nil || aerr != nil {
					t.Fatalf("Parquet: %v, Arrow: %v; want no error", perr, aerr)
				}
				if len(got) != 4 || got[2].At != math.MaxInt64 || got[2].N != math.MaxInt64 || got[2].Took != nil ||
					got[2].Failures[0].At != math.MaxInt64 || got[3].Took == nil || *got[3].Took != 5 || got[3].Failures[1].At != 2 {
					t.Fatalf("read %+v", got)
				}
				return
			}
			if perr == nil || !strings.Contains(perr.Error(), tt.want) || !strings.HasPrefix(perr.Error(), p+": ") {
				t.Fatalf("Parquet: %v; want %q in %s", perr, tt.want, p)
			}
			if len(got) != 2 {
				t.Fatalf("read %d rows before the error, want 2", len(got))
			}
			if _, ok := errors.AsType[*IntRangeError](perr); !ok {
				t.Fatalf("Parquet: %T, want an IntRangeError", perr)
			}
			if aerr == nil || strings.TrimPrefix(aerr.Error(), "u.parquet") != strings.TrimPrefix(perr.Error(), p) {
				t.Fatalf("Arrow and Parquet differ:\nArrow:   %v\nParquet: %v", aerr, perr)
			}
		})
	}
}
