package duckcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateExportLeases: export --table state fills lease_id and
// lease_until from the leases table (the state's files hold nulls there),
// and DuckDB reads them back from Parquet and CSV as the leases table has
// them, with nulls for the hashes not leased.
func TestStateExportLeases(t *testing.T) {
	needCommands(t, "dedup", "plan-retries", "export")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var list strings.Builder
	for i := range 6 {
		fmt.Fprintf(&list, "%02x%038x\n", i*40, i+1)
	}
	listPath := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(listPath, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, listPath)
	mustInfohash(t, "plan-retries", "--data", data, "--limit", "2", "-o", filepath.Join(dir, "jobs.parquet"))
	pq, csv := filepath.Join(dir, "state.parquet"), filepath.Join(dir, "state.csv")
	mustInfohash(t, "export", "--data", data, "-o", pq)
	mustInfohash(t, "export", "--data", data, "--format", "csv", "-o", csv)

	db := duck(t)
	leases := leasesGlob(data)
	for _, tt := range []struct {
		name, rel, key string // key: the export's info_hash as the leases table's
	}{
		{"parquet", "read_parquet(" + Quote(pq) + ")", "e.info_hash"},
		{"csv", "read_csv(" + Quote(csv) + ", header=true)", "unhex(e.info_hash)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n := scalar[int64](t, db, "SELECT count(*) FROM "+tt.rel+" e WHERE e.lease_id IS NOT NULL"); n != 2 {
				t.Errorf("%d rows have a lease_id, want 2 (the jobs planned)", n)
			}
			q := "SELECT count(*) FROM " + tt.rel + " e JOIN " + leases + " l ON " + tt.key + " = l.info_hash" +
				" WHERE e.lease_id = l.lease_id AND e.lease_until = l.lease_until"
			if n := scalar[int64](t, db, q); n != 2 {
				t.Errorf("%d rows have the leases table's lease_id and lease_until, want 2", n)
			}
			if n := scalar[int64](t, db, "SELECT count(*) FROM "+tt.rel+" e WHERE e.lease_id IS NULL AND e.lease_until IS NULL"); n != 4 {
				t.Errorf("%d rows have a null lease, want 4", n)
			}
		})
	}
}
