package schema

import (
	"testing"

	"github.com/parquet-go/parquet-go"
)

// ledgerEntry has the columns of export's ledger table (export.LedgerEntry,
// whose own test holds every exported table to KindOfColumns).
type ledgerEntry struct {
	ID        string `parquet:"id"`
	Name      string `parquet:"name"`
	Rows      int64  `parquet:"rows"`
	AppliedAt int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// TestKindOfColumns: every file infohash writes is told by its columns,
// each by the columns of its own kind alone: an exported catalog used to
// be called state (both have metadata_status), and the leases table jobs
// (both have reason).
func TestKindOfColumns(t *testing.T) {
	names := func(row any) []string {
		var out []string
		for _, f := range parquet.SchemaOf(row).Fields() {
			out = append(out, f.Name())
		}
		return out
	}
	tests := []struct {
		row  any
		want string
	}{
		{Observation{}, "observations"},
		{Job{}, "jobs"},
		{Result{}, "results"},
		{State{}, "state"},
		{Torrent{}, "torrents"},
		{Catalog{}, "catalog"},
		{Lease{}, "leases"},
		{PeerPenalty{}, "peers"},
		{ledgerEntry{}, "ledger"},
		{struct {
			InfoHash Hash `parquet:"info_hash"`
		}{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			cols := names(tt.row)
			if got := KindOfColumns(cols); got != tt.want {
				t.Errorf("%T: got %q, want %q", tt.row, got, tt.want)
			}
			// No other kind's columns are all there: the order of kinds
			// does not decide.
			for _, k := range kinds {
				if k.kind != tt.want && hasAll(cols, k.cols) {
					t.Errorf("%T (%s) has every column of %s: %v", tt.row, tt.want, k.kind, k.cols)
				}
			}
		})
	}
}
