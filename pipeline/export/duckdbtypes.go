package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// DuckDB's readers of the text formats sniff each column's type from a
// sample of rows: a column null in every row sampled (lease_until while
// no hash is leased, the catalog's metadata before the first fetch)
// comes out VARCHAR from csv and JSON from jsonl, on which
// `lease_until > now()` or `sum(total_size)` fail; and jsonl times come
// out TIMESTAMP, not the instant. --describe ends with a read_csv and a
// read_ndjson call that name every column's type instead.

// duckdbReaders are the lines --describe ends with for a table whose
// export rows are row: the read_csv and read_ndjson calls (F for the
// file) that read its csv and jsonl exports with every column typed.
func duckdbReaders(row any) ([]string, error) {
	fields := parquet.SchemaOf(row).Fields()
	csvCols, err := duckdbColumns(fields, omitted["csv"], true)
	if err != nil {
		return nil, err
	}
	jsonCols, err := duckdbColumns(fields, omitted["jsonl"], false)
	if err != nil {
		return nil, err
	}
	return []string{
		"read_csv(F, auto_detect=false, header=true, allow_quoted_nulls=false, max_line_size=2e8, " +
			"buffer_size=2e8, columns=" + csvCols + ")",
		"read_ndjson(F, maximum_object_size=2e8, columns=" + jsonCols + ")",
	}, nil
}

// duckdbColumns renders a DuckDB columns map ({'name': 'TYPE', ...}) of
// fields, in order, less the names in omit, as a csv (inCSV) or jsonl
// export writes them.
func duckdbColumns(fields []parquet.Field, omit []string, inCSV bool) (string, error) {
	var cols []string
	for _, f := range fields {
		if slices.Contains(omit, f.Name()) {
			continue
		}
		typ, err := duckdbType(f, inCSV)
		if err != nil {
			return "", fmt.Errorf("export: column %s: %w", f.Name(), err)
		}
		cols = append(cols, fmt.Sprintf("'%s': '%s'", f.Name(), typ))
	}
	return "{" + strings.Join(cols, ", ") + "}", nil
}

// duckdbType is the DuckDB type a text export's value of node reads as:
// bytes are lowercase hex (VARCHAR), times RFC 3339 UTC (TIMESTAMPTZ),
// lists and structs JSON. A csv cell's list of strings, in DuckDB's list
// syntax (textenc's appendStringList: JSON's escapes it would not undo),
// casts to VARCHAR[]; a struct there stays JSON, as DuckDB's cast from
// text to a STRUCT does not undo JSON's escapes (read_ndjson decodes it).
func duckdbType(node parquet.Node, inCSV bool) (string, error) {
	var lv format.LogicalTypeValue
	if lt := node.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch v := lv.(type) {
	case *format.ListType:
		elem := node.Fields()[0].Fields()[0]
		if inCSV && !elem.Leaf() {
			return "JSON", nil
		}
		t, err := duckdbType(elem, inCSV)
		return t + "[]", err
	case *format.StringType:
		return "VARCHAR", nil
	case *format.TimestampType:
		if v.IsAdjustedToUTC {
			return "TIMESTAMPTZ", nil
		}
		return "TIMESTAMP", nil
	case *format.IntType:
		names := map[int8]string{8: "TINYINT", 16: "SMALLINT", 32: "INTEGER", 64: "BIGINT"}
		if n, ok := names[v.BitWidth]; ok {
			if !v.IsSigned {
				n = "U" + n
			}
			return n, nil
		}
	}
	if !node.Leaf() {
		if inCSV {
			return "JSON", nil
		}
		var fs []string
		for _, f := range node.Fields() {
			t, err := duckdbType(f, false)
			if err != nil {
				return "", err
			}
			fs = append(fs, fmt.Sprintf("%q %s", f.Name(), t))
		}
		return "STRUCT(" + strings.Join(fs, ", ") + ")", nil
	}
	switch node.Type().Kind() {
	case parquet.Boolean:
		return "BOOLEAN", nil
	case parquet.Int32:
		return "INTEGER", nil
	case parquet.Int64:
		return "BIGINT", nil
	case parquet.Float:
		return "FLOAT", nil
	case parquet.Double:
		return "DOUBLE", nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return "VARCHAR", nil // lowercase hex
	}
	return "", fmt.Errorf("no DuckDB type for Parquet type %s", node.Type())
}
