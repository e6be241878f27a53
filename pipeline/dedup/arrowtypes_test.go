package dedup

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// TestArrowColumnTypes: an Arrow input's column of a type dedup does not
// read is wrong schema saying what it is and what dedup wants, in the
// same words by both readers, as the Parquet path says it
// (TestOptionalColumnTypes). They named only the row reader's own type
// ("column "observed_at": want timestamp[ms, tz=UTC], got date32",
// "column "hash_type": want int64, got float64") though every timestamp
// unit, epoch ms and any integer width are read. An int32 observed_at was
// read as epoch ms, every value then "outside 2001-01-01..2200-01-01"
// (none can be in it), where Parquet's INT32 is wrong schema; a uint64
// one was refused where Parquet's UBIGINT is read: now read by value.
func TestArrowColumnTypes(t *testing.T) {
	at := t0.UnixMilli()
	ih := bytes.Repeat([]byte{7}, 20)
	hash := arrow.Field{Name: "info_hash", Type: arrow.BinaryTypes.Binary}
	ts := arrow.Field{Name: "observed_at", Type: arrow.FixedWidthTypes.Timestamp_ms}
	observedAt := func(typ arrow.DataType) arrow.Field { return arrow.Field{Name: "observed_at", Type: typ} }
	want := func(col, is, wants string) string {
		return "wrong schema: column \"" + col + "\" is " + is + ", want " + wants
	}
	const epoch = "a timestamp or a 64-bit integer (epoch ms)"
	tests := []struct {
		name   string
		fields []arrow.Field
		values []any // one row
		want   string
	}{
		{"uint64 observed_at", []arrow.Field{hash, observedAt(arrow.PrimitiveTypes.Uint64)}, []any{ih, uint64(at)}, ""},
		{"uint64 observed_at past 2^63", []arrow.Field{hash, observedAt(arrow.PrimitiveTypes.Uint64)},
			[]any{ih, uint64(math.MaxUint64)}, "row 1: observed_at 18446744073709551615 ms is outside 2001-01-01..2200-01-01"},
		{"int64 observed_at", []arrow.Field{hash, observedAt(arrow.PrimitiveTypes.Int64)}, []any{ih, at}, ""},
		{"int32 observed_at", []arrow.Field{hash, observedAt(arrow.PrimitiveTypes.Int32)}, []any{ih, int32(1000)},
			want("observed_at", "int32", epoch)},
		{"uint32 observed_at", []arrow.Field{hash, observedAt(arrow.PrimitiveTypes.Uint32)}, []any{ih, uint32(1000)},
			want("observed_at", "uint32", epoch)},
		{"date32 observed_at", []arrow.Field{hash, observedAt(arrow.FixedWidthTypes.Date32)}, []any{ih, arrow.Date32(20000)},
			want("observed_at", "date32", epoch)},
		{"date64 observed_at", []arrow.Field{hash, observedAt(arrow.FixedWidthTypes.Date64)}, []any{ih, arrow.Date64(at)},
			want("observed_at", "date64", epoch)},
		{"utf8 observed_at", []arrow.Field{hash, observedAt(arrow.BinaryTypes.String)}, []any{ih, "2026-01-01"},
			want("observed_at", "utf8", epoch)},
		{"float64 hash_type", []arrow.Field{hash, ts, {Name: "hash_type", Type: arrow.PrimitiveTypes.Float64}},
			[]any{ih, arrow.Timestamp(at), 1.0}, want("hash_type", "float64", "an integer (1 or 2)")},
		{"int32 source", []arrow.Field{hash, ts, {Name: "source", Type: arrow.PrimitiveTypes.Int32}},
			[]any{ih, arrow.Timestamp(at), int32(1)}, want("source", "int32", "text or a BLOB (binary)")},
		{"fixed_size_binary source", []arrow.Field{hash, ts, {Name: "source", Type: &arrow.FixedSizeBinaryType{ByteWidth: 6}}},
			[]any{ih, arrow.Timestamp(at), []byte("import")}, want("source", "fixed_size_binary[6]", "text or a BLOB (binary)")},
		{"int64 info_hash", []arrow.Field{{Name: "info_hash", Type: arrow.PrimitiveTypes.Int64}, ts},
			[]any{int64(1), arrow.Timestamp(at)}, want("info_hash", "int64", "binary (20 bytes, or 32 for v2) or hex text")},
		{"int32 info_hash_v2", []arrow.Field{hash, ts, {Name: "info_hash_v2", Type: arrow.PrimitiveTypes.Int32}},
			[]any{ih, arrow.Timestamp(at), int32(7)}, want("info_hash_v2", "int32", "binary (32 bytes) or hex text")},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".arrows")
		if err := os.WriteFile(p, arrowRow(t, tt.fields, tt.values), 0o644); err != nil {
			t.Fatal(err)
		}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			err := readAs(t, p, filepath.Base(p))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// arrowRow is an Arrow IPC stream of one row of values, in columns of
// fields.
func arrowRow(t *testing.T, fields []arrow.Field, values []any) []byte {
	t.Helper()
	sch := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i, v := range values {
		switch fb := b.Field(i).(type) {
		case *array.BinaryBuilder:
			fb.Append(v.([]byte))
		case *array.FixedSizeBinaryBuilder:
			fb.Append(v.([]byte))
		case *array.StringBuilder:
			fb.Append(v.(string))
		case *array.TimestampBuilder:
			fb.Append(v.(arrow.Timestamp))
		case *array.Int64Builder:
			fb.Append(v.(int64))
		case *array.Int32Builder:
			fb.Append(v.(int32))
		case *array.Uint64Builder:
			fb.Append(v.(uint64))
		case *array.Uint32Builder:
			fb.Append(v.(uint32))
		case *array.Float64Builder:
			fb.Append(v.(float64))
		case *array.Date32Builder:
			fb.Append(v.(arrow.Date32))
		case *array.Date64Builder:
			fb.Append(v.(arrow.Date64))
		default:
			t.Fatalf("arrowRow: no case for %T", fb)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return rowiotest.ArrowStream(t, rec)
}
