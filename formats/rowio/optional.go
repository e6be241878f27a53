package rowio

import (
	"reflect"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// WriteParquet writes rows with w, and is how infohash hands rows to any
// parquet-go GenericWriter (ParquetWriter.Write goes through it).
//
// parquet-go v0.32.0 writes some zero values of optional value-type
// fields (int64, string, []byte with an "optional" tag; zero means null)
// as values when a Write call holds several rows: its scan of the null
// bitmap (writeRowsFuncOfOptional) takes a run of k non-null rows
// starting at offset k of a 64-row word, followed by nulls, for a run
// that fills the word. So [null, value, null, null] came out as [null,
// value, 0, 0]: DuckDB read 1970-01-01 for a missing last_attempt, an empty string
// for a missing last_failure. Written one row per call the scan cannot go
// wrong; for a type without optional columns the batch is safe and kept
// (one row per call cost 1.6x the batch on the catalog).
func WriteParquet[T any](w *parquet.GenericWriter[T], rows []T) (int, error) {
	if !hasOptional[T]() {
		return w.Write(rows)
	}
	for i := range rows {
		if _, err := w.Write(rows[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(rows), nil
}

var optionalTypes sync.Map // reflect.Type → bool

// hasOptional reports whether T's Parquet schema has an optional column.
func hasOptional[T any]() bool {
	t := reflect.TypeFor[T]()
	if v, ok := optionalTypes.Load(t); ok {
		return v.(bool)
	}
	var walk func(parquet.Node) bool
	walk = func(n parquet.Node) bool {
		if n.Optional() {
			return true
		}
		for _, f := range n.Fields() {
			if walk(f) {
				return true
			}
		}
		return false
	}
	has := walk(parquet.SchemaOf(reflect.New(t).Interface()))
	optionalTypes.Store(t, has)
	return has
}
