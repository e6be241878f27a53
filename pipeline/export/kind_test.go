package export

import (
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
)

// TestExportedTablesKind: every table export writes, with the columns it
// writes them with (tableDocs), is told by schema.KindOfColumns as that
// table, so that dedup or merge given one names it: an exported catalog
// was called state, and the leases table jobs.
func TestExportedTablesKind(t *testing.T) {
	for _, table := range Tables {
		t.Run(table, func(t *testing.T) {
			var cols []string
			for _, f := range parquet.SchemaOf(tableDocs[table].row).Fields() {
				cols = append(cols, f.Name())
			}
			if got := schema.KindOfColumns(cols); got != table {
				t.Errorf("columns %v: kind %q, want %q", cols, got, table)
			}
		})
	}
}
