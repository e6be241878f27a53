package dataset

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
	"github.com/infohash/infohash/formats/statecol"
)

// TestMigrateFromV5: a format 5 state file (no peers column) reads with
// an empty peers list, both unmigrated (a reader's view) and after a
// writer's open migrates the dataset to the current format, whose state
// files have the column (and keep every other value).
func TestMigrateFromV5(t *testing.T) {
	// A dataset as format 5 left it: its state file has no peers column.
	rows := []schematest.StateV5{{InfoHash: schema.Hash{0, 1}, HashType: 1, SeenCount: 7, MetadataStatus: "failed",
		Attempts: 3, NextRetry: 5, Tier: "hot", BadMetadata: 1, AvoidPeers: []string{"127.0.0.1:9"}}}
	dir, path, sum, m := oldStateDataset(t, 5, rows)
	check := func(what string, got []schema.State, err error) {
		t.Helper()
		if err != nil || len(got) != 1 || got[0].SeenCount != 7 || got[0].BadMetadata != 1 || len(got[0].AvoidPeers) != 1 || len(got[0].Peers) != 0 {
			t.Fatalf("%s: %+v, %v", what, got, err)
		}
	}
	// Unmigrated, as export and status read it: the column may be
	// missing, and reads empty.
	lacks := m.StateLacks()
	if lacks != statecol.ColumnsNamed("peers", "first_source", "last_failure_at") {
		t.Fatalf("format 5 lacks %v", lacks.Names())
	}
	got, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum, lacks.Names()...))
	check("format 5, unmigrated", got, err)
	// The current format lacks nothing: a missing peers column is damage.
	if _, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum)); err == nil || !strings.Contains(err.Error(), `no column "peers`) {
		t.Fatalf("a file without peers read as of the current format: %v", err)
	}

	d, cur, pf := migratedStateFile(t, dir, m)
	st := cur.Table(TableState)
	got, err = ReadPartition[schema.State](d, st, "00")
	check("migrated", got, err)
	if _, ok := pf.Schema().Lookup("peers", "list", "element"); !ok {
		t.Fatal("migrated file lacks peers")
	}
}
