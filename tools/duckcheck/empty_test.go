package duckcheck

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// The DuckDB types of the unpartitioned tables' columns (formats/schema
// Lease and PeerPenalty, and the ledger's entries).
var (
	leaseTypes = map[string][]string{
		"info_hash": {"BLOB"}, "lease_id": {"VARCHAR"}, "lease_until": tsTypes,
		"attempt": {"INTEGER"}, "reason": {"VARCHAR"}, "planned_at": tsTypes,
	}
	peerTypes = map[string][]string{
		"addr": {"VARCHAR"}, "class": {"VARCHAR"}, "until": tsTypes, "failures": {"INTEGER"}, "last_at": tsTypes,
	}
	ledgerTypes = map[string][]string{
		"id": {"VARCHAR"}, "name": {"VARCHAR"}, "rows": {"BIGINT"}, "applied_at": tsTypes,
	}
)

// documentedGlob is one read path README gives for a table.
type documentedGlob struct {
	table string
	rel   string // the read_parquet call
	// partitioned: its files lie in prefix=XX folders, which DuckDB reads
	// as a prefix column (of VARCHAR, as hive_types pins it)
	partitioned bool
	types       map[string][]string
}

// documentedGlobs are README's read paths of dataset data's tables.
func documentedGlobs(data string) []documentedGlob {
	flat := func(table string) string {
		return "read_parquet(" + Quote(filepath.Join(data, table, "current", "*.parquet")) + ")"
	}
	return []documentedGlob{
		{"state", StateGlob(data), true, stateTypes},
		{"torrents", torrentsGlob(data), true, torrentTypes},
		{"leases", flat("leases"), false, leaseTypes},
		{"peers", flat("peers"), false, peerTypes},
		{"ledger", flat("ledger"), false, ledgerTypes},
	}
}

// checkEmptyGlob reads g, a glob of an empty table, with DuckDB: 0 rows,
// and exactly the table's columns with their types (and, for a glob of
// prefix= folders, a prefix column that a filter on a hex prefix can use).
func checkEmptyGlob(t *testing.T, g documentedGlob) {
	t.Helper()
	db := duck(t)
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + g.rel).Scan(&n); err != nil {
		t.Errorf("%s: DuckDB cannot read %s: %v", g.table, g.rel, err)
		return
	}
	if n != 0 {
		t.Errorf("%s: %d rows, want 0", g.table, n)
	}
	_, types := describe(t, db, g.rel)
	want := slices.Sorted(maps.Keys(g.types))
	if g.partitioned {
		want = append(want, "prefix")
		g.types["prefix"] = []string{"VARCHAR"}
		defer delete(g.types, "prefix")
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(types)); !slices.Equal(got, want) {
		t.Errorf("%s: columns %v, want %v", g.table, got, want)
	}
	for col, typ := range types {
		if ok := g.types[col]; ok != nil && !slices.Contains(ok, typ) {
			t.Errorf("%s: column %s is %s, want %s", g.table, col, typ, strings.Join(ok, " or "))
		}
	}
	if g.partitioned {
		if err := db.QueryRow("SELECT count(*) FROM " + g.rel + " WHERE prefix = 'ab'").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: a filter on prefix 'ab': %d rows, %v", g.table, n, err)
		}
	}
}

// TestEmptyTablesReadByDuckDB: every glob README documents matches a file
// once a snapshot is committed, so DuckDB reads an empty table as 0 rows
// with the table's columns rather than failing with "No files found":
// a commit of nothing (every table empty), and a pass whose merge freed
// every lease (no fetch succeeded, no peer penalised).
func TestEmptyTablesReadByDuckDB(t *testing.T) {
	t.Run("a commit of nothing", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		ctx := context.Background()
		d, err := dataset.Open(ctx, data, dataset.OpenOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx, dataset.CommitOptions{Writer: "test"}); err != nil {
			t.Fatal(err)
		}
		for _, g := range documentedGlobs(data) {
			checkEmptyGlob(t, g)
		}
	})
	t.Run("every lease freed", func(t *testing.T) {
		needCommands(t, "dedup", "plan-retries", "merge")
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		list := filepath.Join(dir, "hashes.txt")
		if err := os.WriteFile(list, []byte(fmt.Sprintf("%040x\n%040x\nab%038x\n", 1, 2, 3)), 0o644); err != nil {
			t.Fatal(err)
		}
		mustInfohash(t, "dedup", "--data", data, list)
		jobsPath := filepath.Join(dir, "jobs.parquet")
		mustInfohash(t, "plan-retries", "--data", data, "--limit", "10", "-o", jobsPath)
		jobs, err := dataset.ReadFile[schema.Job](jobsPath)
		if err != nil || len(jobs) != 3 {
			t.Fatalf("%d jobs, %v; want 3", len(jobs), err)
		}
		db := duck(t)
		leases := documentedGlobs(data)[2]
		if n := scalar[int64](t, db, "SELECT count(*) FROM "+leases.rel); n != 3 {
			t.Fatalf("%d leases, want 3", n)
		}
		results := make([]schema.Result, len(jobs))
		for i, j := range jobs {
			results[i] = schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt,
				LeaseID: j.LeaseID, AttemptedAt: time.Now().UnixMilli(), Outcome: schema.OutcomeReleased}
		}
		resultsPath := filepath.Join(dir, "results.parquet")
		w, err := rowio.Create[schema.Result](resultsPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(results); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		mustInfohash(t, "merge", "--data", data, resultsPath)
		for _, g := range documentedGlobs(data) {
			switch g.table {
			case "torrents", "leases", "peers":
				checkEmptyGlob(t, g)
			default:
				checkTypes(t, db, g.table, g.rel, g.types)
			}
		}
		if n := scalar[int64](t, db, "SELECT count(*) FROM "+StateGlob(data)); n != 3 {
			t.Errorf("%d state rows, want 3", n)
		}
	})
}
