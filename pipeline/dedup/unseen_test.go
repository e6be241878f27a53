package dedup

import (
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestFirstSightingOfAResultOnlyHash: merge adds a row for a fetch result
// of a hash the state lacks, with placeholders for what no sighting gave
// it (seen_count 0, first and last seen the attempt's time, last_source
// import). Its first real sightings are then its whole sighting record:
// one older than the attempt left last_seen at the attempt and last_source
// "import", so the state said the latest sighting was an import that never
// happened (seen_count 1, the only sighting dht_get_peers, earlier). The
// earlier first_seen stays (the attempt showed the hash existed), and the
// retry columns are merge's, untouched. Each way dedup reaches the row:
// a splice, a partition rewrite (compaction), and a cold file's thaw.
func TestFirstSightingOfAResultOnlyHash(t *testing.T) {
	attempt := t0.Add(5 * time.Hour).UnixMilli()
	tests := []struct {
		name       string
		seen       int64 // the sighting
		cold       bool  // the row is in a cold file
		maxFiles   int   // 1 with a new hash beside it: the partition is rewritten
		wantFirst  int64
		wantLast   int64
		wantSource string
	}{
		{"splice, sighted before the attempt", t0.Add(3 * time.Hour).UnixMilli(), false, 0,
			t0.Add(3 * time.Hour).UnixMilli(), t0.Add(3 * time.Hour).UnixMilli(), schema.SourceGetPeers},
		{"rewrite, sighted before the attempt", t0.Add(3 * time.Hour).UnixMilli(), false, 1,
			t0.Add(3 * time.Hour).UnixMilli(), t0.Add(3 * time.Hour).UnixMilli(), schema.SourceGetPeers},
		{"thaw, sighted before the attempt", t0.Add(3 * time.Hour).UnixMilli(), true, 0,
			t0.Add(3 * time.Hour).UnixMilli(), t0.Add(3 * time.Hour).UnixMilli(), schema.SourceGetPeers},
		{"splice, sighted after the attempt", t0.Add(7 * time.Hour).UnixMilli(), false, 0,
			attempt, t0.Add(7 * time.Hour).UnixMilli(), schema.SourceGetPeers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir() + "/ds"
			h := schema.Hash{0x42, 1}
			row := schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: attempt, LastSeen: attempt,
				LastSource: schema.SourceImport, MetadataStatus: schema.StatusFailed, Attempts: 1, LastAttempt: attempt,
				LastFailure: schema.OutcomeConnectFailed, NextRetry: attempt + 30*60_000, Tier: schema.TierHot}
			if tt.cold {
				row.Tier = schema.TierCold
			}
			writeStateFile(t, data, "42", row, tt.cold)
			obs := []schema.Observation{{InfoHash: h, HashType: schema.HashV1, ObservedAt: tt.seen, Source: schema.SourceGetPeers}}
			if tt.maxFiles > 0 {
				obs = append(obs, schema.Observation{InfoHash: schema.Hash{0x42, 2}, HashType: schema.HashV1,
					ObservedAt: tt.seen, Source: schema.SourceGetPeers})
			}
			if _, err := run(t, data, func(o *Options) {
				o.Now = t0.Add(8 * time.Hour)
				if tt.maxFiles > 0 {
					o.MaxFiles = tt.maxFiles
				}
			}, writeObs(t, t.TempDir(), obs)); err != nil {
				t.Fatal(err)
			}
			got := readState(t, data)[h]
			if got.FirstSeen != tt.wantFirst || got.LastSeen != tt.wantLast || got.LastSource != tt.wantSource ||
				got.SeenCount != 1 || got.Activity != 1 {
				t.Fatalf("first_seen %d last_seen %d last_source %q seen_count %d activity %v;\nwant %d %d %q 1 1",
					got.FirstSeen, got.LastSeen, got.LastSource, got.SeenCount, got.Activity,
					tt.wantFirst, tt.wantLast, tt.wantSource)
			}
			if got.Attempts != 1 || got.LastAttempt != attempt || got.LastFailure != schema.OutcomeConnectFailed {
				t.Fatalf("retry columns changed: %+v", got)
			}
		})
	}
}

// writeStateFile commits a dataset whose partition key holds the one row,
// in a cold file when cold.
func writeStateFile(t *testing.T, data, key string, row schema.State, cold bool) {
	t.Helper()
	d, err := dataset.Open(context.Background(), data, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	name := dataset.NewName(".parquet")
	if cold {
		name = schedule.ColdFileName()
	}
	fi, err := dataset.WriteStagedAs(tx, dataset.TableState, key, name, []schema.State{row})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}
