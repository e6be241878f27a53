package dataset

import (
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
	"github.com/infohash/infohash/formats/statecol"
)

// TestMigrateFromV8: a format 8 state file (no first_source nor
// last_failure_at) reads both as null (unknown), unmigrated (a reader's
// view) and after a writer's open migrates the dataset to format 10,
// whose rewritten state files have both columns, null, and keep every
// other value.
func TestMigrateFromV8(t *testing.T) {
	rows := []schematest.StateV8{{StateV5: schematest.StateV5{InfoHash: schema.Hash{0, 1}, HashType: 1, SeenCount: 7,
		LastSource: schema.SourceGetPeers, MetadataStatus: "failed", Attempts: 3, LastAttempt: 4, LastFailure: "timeout",
		NextRetry: 5, Tier: "hot"}, Peers: []string{"127.0.0.1:9"}}}
	dir, path, sum, m := oldStateDataset(t, 8, rows)
	check := func(what string, got []schema.State, err error) {
		t.Helper()
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %+v, %v", what, got, err)
		}
		g := got[0]
		if g.FirstSource != "" || g.LastFailureAt != 0 {
			t.Errorf("%s: first_source %q, last_failure_at %d, want both null", what, g.FirstSource, g.LastFailureAt)
		}
		if g.SeenCount != 7 || g.LastSource != schema.SourceGetPeers || g.LastFailure != "timeout" || g.LastAttempt != 4 ||
			len(g.Peers) != 1 {
			t.Errorf("%s: the other columns read %+v", what, g)
		}
	}
	lacks := m.StateLacks()
	if lacks != statecol.ColumnsNamed("first_source", "last_failure_at") {
		t.Fatalf("format 8 lacks %v", lacks.Names())
	}
	got, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum, lacks.Names()...))
	check("format 8, unmigrated", got, err)
	// The current format lacks nothing: a missing column is damage.
	if _, err := statecol.ReadStateFile(rowio.RecordedFile(path, sum)); err == nil || !strings.Contains(err.Error(), `no column "first_source`) {
		t.Fatalf("a file without first_source read as of the current format: %v", err)
	}

	d, cur, pf := migratedStateFile(t, dir, m)
	st := cur.Table(TableState)
	got, err = ReadPartition[schema.State](d, st, "00")
	check("migrated", got, err)
	for _, col := range []string{"first_source", "last_failure_at"} {
		if _, ok := pf.Schema().Lookup(col); !ok {
			t.Errorf("migrated file lacks %s", col)
		}
	}
}
