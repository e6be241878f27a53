package dataset

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
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
	checkStateMigration(t, dir, path, sum, m, []string{"first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}, func(what string, g schema.State) {
		if g.FirstSource != "" || g.LastFailureAt != 0 {
			t.Errorf("%s: first_source %q, last_failure_at %d, want both null", what, g.FirstSource, g.LastFailureAt)
		}
		if g.SeenCount != 7 || g.LastSource != schema.SourceGetPeers || g.LastFailure != "timeout" || g.LastAttempt != 4 ||
			len(g.Peers) != 1 {
			t.Errorf("%s: the other columns read %+v", what, g)
		}
	}, []string{"first_source"}, []string{"last_failure_at"}, []string{"peers_at"}, []string{"info_hash_v2_source"})
}
