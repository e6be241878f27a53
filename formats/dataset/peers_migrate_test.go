package dataset

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
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
	// Unmigrated, as export and status read it, the column may be
	// missing, and reads empty.
	checkStateMigration(t, dir, path, sum, m, []string{"peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}, func(what string, g schema.State) {
		if g.SeenCount != 7 || g.BadMetadata != 1 || len(g.AvoidPeers) != 1 || len(g.Peers) != 0 {
			t.Fatalf("%s: %+v", what, g)
		}
	}, []string{"peers", "list", "element"})
}
