package rowio

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// TextType names the string type of a BYTE_ARRAY column of type t
// ("STRING", "UTF8", "ENUM", "JSON": DuckDB writes a VARCHAR so), or is
// "" for bytes (a BLOB) and any other type. A hash column of text holds
// hex, which the stages decode rather than take its bytes as a hash.
func TextType(t parquet.Type) string {
	if t.Kind() != parquet.ByteArray {
		return ""
	}
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return lt.Value.String()
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.UTF8:
			return "UTF8"
		case deprecated.Enum:
			return "ENUM"
		case deprecated.Json:
			return "JSON"
		}
	}
	return ""
}

// ArrowTextType names the string type of column col of an Arrow schema
// ("utf8", "large_utf8", "string_view": IsArrowString, as the readers read
// them), or is "" when col is of another type or absent: TextType's
// answer for an Arrow stream. A string_view (Polars') was "": its hex
// read as bytes.
func ArrowTextType(s *arrow.Schema, col string) string {
	if s == nil {
		return ""
	}
	i, err := FieldIndex(s, col)
	if i < 0 || err != nil {
		return ""
	}
	if t := s.Field(i).Type; IsArrowString(t.ID()) {
		return t.String()
	}
	return ""
}
