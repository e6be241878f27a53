package rowio

import (
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// absentLists returns the index paths of T's fields (as reflect's
// FieldByIndex takes them) that are top-level list or repeated columns of
// want missing from the file schema got.
//
// parquet-go v0.32.0 reads such a column, in a row where some optional
// column holds a value, as one zero element ([""], [{}]) rather than as
// none: a DuckDB jobs file with a hash_type column and no peers gave fetch
// a peer "" to dial; results without peer_failures would give merge an
// endpoint "" it refuses. The reader empties these fields after each Read.
func absentLists(t reflect.Type, want, got *parquet.Schema) [][]int {
	have := map[string]bool{}
	for _, f := range got.Fields() {
		have[f.Name()] = true
	}
	var out [][]int
	for _, n := range want.Fields() {
		if have[n.Name()] || !(n.Repeated() || isList(n)) {
			continue
		}
		if sf, ok := fieldByColumn(t, n.Name()); ok {
			out = append(out, sf.Index)
		}
	}
	return out
}

// isList reports whether n is a LIST-annotated group.
func isList(n parquet.Node) bool {
	lt := n.Type().LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.ListType)
	return ok
}

// clearAbsent empties the absent list fields of rows.
func clearAbsent[T any](rows []T, absent [][]int) {
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, idx := range absent {
			v.FieldByIndex(idx).SetZero()
		}
	}
}
