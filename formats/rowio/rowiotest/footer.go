package rowiotest

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// EditFooter returns the Parquet file b with its metadata changed by
// edit: a crafted footer over the same column chunks.
func EditFooter(t testing.TB, b []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], &md); err != nil {
		t.Fatal(err)
	}
	edit(&md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(bytes.Clone(b[:len(b)-8-n]), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// Int32Timestamp is an edit for EditFooter typing the INT32 leaf columns
// named in names (at any depth) as TIMESTAMP(MILLIS, UTC), or, converted,
// by the converted type TIMESTAMP_MILLIS alone (a writer older than
// logical types): a crafted footer, as the format stores a TIMESTAMP as
// an INT64. Each name must be met, as an INT32.
func Int32Timestamp(t testing.TB, converted bool, names ...string) func(*format.FileMetaData) {
	return func(md *format.FileMetaData) {
		t.Helper()
		met := map[string]bool{}
		for i := range md.Schema {
			e := &md.Schema[i]
			if i == 0 || !slices.Contains(names, e.Name) {
				continue
			}
			if !e.Type.Valid || e.Type.V != format.Int32 {
				t.Fatalf("column %q is %v: want an INT32", e.Name, e.Type)
			}
			met[e.Name] = true
			e.ConvertedType = thrift.Null[deprecated.ConvertedType]{V: deprecated.TimestampMillis, Valid: true}
			e.LogicalType = format.LogicalType{}
			if !converted {
				e.LogicalType.Value = &format.TimestampType{IsAdjustedToUTC: true,
					Unit: format.TimeUnit{Value: &format.MilliSeconds{}}}
			}
		}
		for _, n := range names {
			if !met[n] {
				t.Fatalf("no column %q in the footer", n)
			}
		}
	}
}

// NullType is an edit for EditFooter typing the leaf columns named in
// names (at any depth) with Parquet's NULL logical type, their pages as
// they were: a crafted footer, as a NULL column is all null (pyarrow
// writes one so) and a writer gives it no values. Each name must be met.
func NullType(t testing.TB, names ...string) func(*format.FileMetaData) {
	return func(md *format.FileMetaData) {
		t.Helper()
		met := map[string]bool{}
		for i := range md.Schema {
			e := &md.Schema[i]
			if i == 0 || !slices.Contains(names, e.Name) || e.NumChildren.V > 0 {
				continue
			}
			met[e.Name] = true
			e.ConvertedType = thrift.Null[deprecated.ConvertedType]{}
			e.LogicalType = format.LogicalType{Value: &format.NullType{}}
		}
		for _, n := range names {
			if !met[n] {
				t.Fatalf("no leaf column %q in the footer", n)
			}
		}
	}
}
