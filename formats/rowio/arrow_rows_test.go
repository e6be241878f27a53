package rowio

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/schema"
)

// TestArrowValueErrorRowInStream: a value that its field cannot take (a
// fixed-size hash of another length, seconds past int64 milliseconds, a
// uint64 past int64, such seconds in a list of structs) is named by its
// row in the stream, as the column readers name rows, not in its record
// batch: the bad value is in row 4 (counted from 1), the second batch's
// second row, which the reader called row 1 from 0 (a list's struct field,
// named "at" alone: 2, the index of the value in the batch's list values).
func TestArrowValueErrorRowInStream(t *testing.T) {
	type failure struct {
		At int64 `parquet:"at,timestamp(millisecond)"`
	}
	type row struct {
		InfoHash schema.Hash `parquet:"info_hash"`
		At       int64       `parquet:"at,timestamp(millisecond)"`
		N        int64       `parquet:"n"`
		Failures []failure   `parquet:"failures,list"`
	}
	const tooManySeconds = math.MaxInt64/1000 + 1
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Second}},
		{Name: "n", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "failures", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Second}}))},
	}, nil)
	type value struct {
		hash     int
		at       int64
		n        uint64
		failures []int64
	}
	good := value{20, 1000, 7, []int64{1000}}
	for _, tt := range []struct {
		name string
		bad  value
		want string
	}{
		{"hash of 19 bytes", value{19, 1000, 7, nil}, `s: column "info_hash" row 4: 19 bytes, want 20`},
		{"seconds past int64 ms", value{20, tooManySeconds, 7, nil}, `s: column "at" row 4: 9223372036854776 s is outside the range of int64 milliseconds`},
		{"uint64 past int64", value{20, 1000, math.MaxUint64, nil}, `s: column "n" row 4: 18446744073709551615 is more than an int64 holds`},
		{"seconds in a list of structs", value{20, 1000, 7, []int64{1000, tooManySeconds}},
			`s: column "failures.at" row 4: 9223372036854776 s is outside the range of int64 milliseconds`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
			for _, batch := range [][]value{{good, good}, {good, tt.bad}} { // rows 0-1, then 2-3
				b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				for _, v := range batch {
					b.Field(0).(*array.BinaryBuilder).Append(bytes.Repeat([]byte{7}, v.hash))
					b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(v.at))
					b.Field(2).(*array.Uint64Builder).Append(v.n)
					lb := b.Field(3).(*array.ListBuilder)
					lb.Append(true)
					sb := lb.ValueBuilder().(*array.StructBuilder)
					for _, at := range v.failures {
						sb.Append(true)
						sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(at))
					}
				}
				rec := b.NewRecord()
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
				b.Release()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := OpenArrow[row]("s", &buf)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rows, err := r.ReadAll()
			if err == nil || err.Error() != tt.want || len(rows) != 3 {
				t.Fatalf("read %d rows, err %v\nwant 3 rows, then %q", len(rows), err, tt.want)
			}
		})
	}
}
