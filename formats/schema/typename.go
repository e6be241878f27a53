package schema

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TypeName names the type of a column as the files store it, the way
// README's state table and export --describe give it: its logical type
// when it has one (STRING, TIMESTAMP(ms, UTC), INT8, LIST<…>), else its
// physical type (FIXED_LEN_BYTE_ARRAY(20), BYTE_ARRAY, INT64, DOUBLE,
// BOOLEAN); a group is STRUCT<name TYPE, …>.
func TypeName(node parquet.Node) string {
	var lv format.LogicalTypeValue
	if lt := node.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch v := lv.(type) {
	case *format.ListType:
		return "LIST<" + TypeName(node.Fields()[0].Fields()[0]) + ">"
	case *format.StringType:
		return "STRING"
	case *format.TimestampType:
		if _, ms := v.Unit.Value.(*format.MilliSeconds); ms && v.IsAdjustedToUTC {
			return "TIMESTAMP(ms, UTC)"
		}
	case *format.IntType:
		return fmt.Sprintf("INT%d", v.BitWidth)
	}
	if !node.Leaf() {
		var fs []string
		for _, f := range node.Fields() {
			fs = append(fs, f.Name()+" "+TypeName(f))
		}
		return "STRUCT<" + strings.Join(fs, ", ") + ">"
	}
	switch typ := node.Type(); typ.Kind() {
	case parquet.FixedLenByteArray:
		return fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", typ.Length())
	case parquet.ByteArray:
		return "BYTE_ARRAY"
	case parquet.Double:
		return "DOUBLE"
	default:
		return typ.String()
	}
}
