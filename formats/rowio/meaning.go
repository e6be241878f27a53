package rowio

import (
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// A column's physical type does not say what its values mean: a DATE, a
// TIME and a DECIMAL are INT32s or INT64s, and parquet-go reads any of
// them into an integer field as the numbers stored (a DATE attempt of
// 2022-01-08 as attempt 19000, a DECIMAL(9,2) 1.50 as 150, a TIMESTAMP
// lookup_ms as a duration of 1.7e12 ms). meaningError refuses a column
// whose values a field would read with another meaning; a column whose
// values read the same stays accepted: an integer of any width or
// signedness (read by value: otherWidth, narrowCheck, unsignedCheck), a
// DECIMAL of scale 0, a TIMESTAMP of any unit for a timestamp field
// (parquet-go converts it to milliseconds), a plain INT64 for one (epoch
// ms, as the Arrow reader reads an integer), text of any string type or
// a BLOB for a string field, an all-null (NULL) column. Text for a byte
// field is left to the reader (TextBytesError): some decode a hash's hex.

// meaningError is the error for column path of logical type got (its
// physical type checked already) read into a field of type want; nil
// when it reads as the field means it.
func meaningError(path []string, want, got parquet.Type) error {
	is := logicalOf(got)
	if is == nil {
		if ct := got.ConvertedType(); ct != nil && *ct == deprecated.Interval { // no logical type has its meaning
			return fmt.Errorf("column %q is INTERVAL, want %s", joinPath(path), wantName(want))
		}
		return nil
	}
	ok := false
	switch v := is.(type) {
	case *format.NullType: // all null: no value to misread
		ok = true
	case *format.IntType: // into a timestamp field: epoch ms
		ok = want.Kind() == parquet.Int32 || want.Kind() == parquet.Int64
	case *format.DecimalType:
		ok = (want.Kind() == parquet.Int32 || want.Kind() == parquet.Int64) && v.Scale == 0
	case *format.TimestampType:
		_, ok = logicalOf(want).(*format.TimestampType)
	case *format.StringType, *format.EnumType, *format.JsonType:
		ok = want.Kind() == parquet.ByteArray || want.Kind() == parquet.FixedLenByteArray
	}
	if ok {
		return nil
	}
	return fmt.Errorf("column %q is %s, want %s", joinPath(path), is, wantName(want))
}

// logicalOf is t's logical type (parquet-go gives a converted type that
// has one as it), nil for none.
func logicalOf(t parquet.Type) format.LogicalTypeValue {
	if lt := t.LogicalType(); lt != nil {
		return lt.Value
	}
	return nil
}

// isInt reports whether t, a field's type, is an integer's: INT32 or
// INT64 but no timestamp (whose values are read in milliseconds).
func isInt(t parquet.Type) bool {
	k := t.Kind()
	if k != parquet.Int32 && k != parquet.Int64 {
		return false
	}
	_, ts := logicalOf(t).(*format.TimestampType)
	return !ts
}

// wantName says what a field of type t reads, for errors.
func wantName(t parquet.Type) string {
	switch lt := logicalOf(t).(type) {
	case *format.TimestampType:
		return "a TIMESTAMP or an INT64 (epoch ms)"
	case *format.StringType:
		return "text (STRING)"
	case nil, *format.IntType:
		if isInt(t) {
			return "an integer (" + t.Kind().String() + ")"
		}
	default:
		return lt.String()
	}
	if t.Kind() == parquet.ByteArray {
		return "bytes (BYTE_ARRAY)"
	}
	return kindName(t.Kind(), t.Length())
}

// TextBytesError says, as one line, that a leaf column of s read into a
// byte field of T ([]byte, [N]byte) is text (TextType: a VARCHAR, as
// DuckDB writes one): parquet-go reads its characters as the bytes, so a
// hash written as hex, or an info dictionary cast to text (DuckDB escapes
// its bytes as \xNN), would be read as bytes it does not hold. The
// top-level columns named in hex are not refused: their reader decodes
// hex text. nil when there is no such column.
func TextBytesError[T any](s *parquet.Schema, hex ...string) error {
	var zero T
	want := parquet.SchemaOf(zero)
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		gl, ok := s.Lookup(path...)
		if !ok || logicalOf(wl.Node.Type()) != nil || slices.Contains(hex, path[0]) {
			continue
		}
		if k := wl.Node.Type().Kind(); k != parquet.ByteArray && k != parquet.FixedLenByteArray {
			continue
		}
		if tt := TextType(gl.Node.Type()); tt != "" {
			return fmt.Errorf("column %q is %s, want %s", joinPath(path), tt, wantName(wl.Node.Type()))
		}
	}
	return nil
}
