package status

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestTotalsSinceMigration: a dataset migrated from a format before 7,
// which kept no totals, counts its totals from the migration, and status
// says so: "totals since the migration at T (older work was not
// counted): 3 observations, 0 new hashes" beside its 47 hashes, where it
// printed "3 observations, 0 new hashes", a new dataset's totals. One
// migrated from format 7, which kept its totals, and one of the current
// format say nothing of it.
func TestTotalsSinceMigration(t *testing.T) {
	migratedAt := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		format int // of the dataset before the writer's open
		since  string
	}{
		{"migrated from format 6", 6, "since the migration at 2026-05-01T12:00:00Z (older work was not counted): "},
		{"migrated from format 7", 7, ""},
		{"current format", dataset.FormatVersion, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var rows []schema.State
			for i := range 47 {
				rows = append(rows, schema.State{InfoHash: schema.Hash{byte(i), 1}, HashType: schema.HashV1,
					MetadataStatus: schema.StatusNew, Tier: schema.TierHot, FirstSeen: 1000, LastSeen: 1000, SeenCount: 1})
			}
			datasettest.CommitStateFiles(t, dir, datasettest.HotFiles(rows))
			datasettest.SetFormatVersion(t, dir, tt.format)
			// A writer's open migrates; then a dedup of 3 sightings of known
			// hashes counts its work.
			d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Now: migratedAt})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			datasettest.Commit(t, dir, func(tx *dataset.Tx) {
				tx.AddTotal(dataset.TotalDedupObservations, 3)
				tx.AddTotal(dataset.TotalDedupNew, 0)
			})
			r, err := Run(context.Background(), dir, migratedAt.Add(time.Hour), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			r.Print(&b)
			line := regexp.MustCompile(`(?m)^totals +(.*)$`).FindStringSubmatch(b.String())
			want := tt.since + "3 observations, 0 new hashes, 0 jobs planned"
			if r.Hashes != 47 || line == nil || !strings.HasPrefix(line[1], want) {
				t.Fatalf("%d hashes, totals line %q; want 47 and one starting %q:\n%s", r.Hashes, line, want, b.String())
			}
			if got := r.TotalsSince != nil; got != (tt.since != "") || (got && !r.TotalsSince.Equal(migratedAt)) {
				t.Errorf("totals_since %v, want %v", r.TotalsSince, tt.since != "")
			}
		})
	}
}
