package dedup

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestProvenBadSightingKeepsItsWait: a sighting does not pull forward the
// long wait of a hash proven bad (bad_metadata at bad_metadata.sources)
// whose last failure is one the reactivation rule lists (rejected: its bad
// sources, penalised, were all fetch found), whether its row is spliced
// in a hot file or thawed from a cold one; a hash with one bad source is
// reactivated. Spliced rows decode only the columns dedup folds: without
// bad_metadata among them the rule read 0 there and pulled the wait.
func TestProvenBadSightingKeepsItsWait(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	day := 24 * time.Hour
	pol := schedule.Default()
	failed := func(h schema.Hash, tier string, bad int32) schema.State {
		return schema.State{InfoHash: h, HashType: 1, FirstSeen: t0.Add(-60 * day).UnixMilli(), LastSeen: t0.Add(-40 * day).UnixMilli(),
			SeenCount: 1, MetadataStatus: schema.StatusFailed, LastFailure: schema.OutcomeRejected, Attempts: 4, BackoffStep: 2,
			BadMetadata: bad, LastAttempt: t0.Add(-day).UnixMilli(), NextRetry: t0.Add(6 * day).UnixMilli(), Tier: tier,
			AvoidPeers: []string{"192.0.2.1:6881", "192.0.2.2:6881"}[:bad]}
	}
	hotProven := failed(schema.Hash{0x43, 1}, schema.TierHot, pol.BadMetadata.Sources)
	hotOne := failed(schema.Hash{0x43, 2}, schema.TierHot, 1)
	coldProven := failed(schema.Hash{0x42, 1}, schema.TierCold, pol.BadMetadata.Sources)
	commitColdHot(t, data, []schema.State{coldProven}, []schema.State{hotProven, hotOne})

	seen := t0.Add(time.Hour).UnixMilli()
	st := sightAll(t, dir, data, pol, seen, hotProven, hotOne, coldProven)
	s := readState(t, data)
	tests := []struct {
		name    string
		was     schema.State
		pulled  bool
		wantBad int32
	}{
		{name: "hot, proven bad", was: hotProven, wantBad: pol.BadMetadata.Sources},
		{name: "hot, one bad source", was: hotOne, pulled: true, wantBad: 1},
		{name: "cold, proven bad", was: coldProven, wantBad: pol.BadMetadata.Sources},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s[tt.was.InfoHash]
			if pulled := r.NextRetry != tt.was.NextRetry; pulled != tt.pulled || (r.Reactivated != 0) != tt.pulled {
				t.Errorf("%x: next_retry %s (was %s), reactivated_at %d; want pulled forward: %v",
					r.InfoHash, schema.Time(r.NextRetry), schema.Time(tt.was.NextRetry), r.Reactivated, tt.pulled)
			}
			if r.Tier != schema.TierHot || r.BadMetadata != tt.wantBad || r.LastSeen != seen {
				t.Errorf("%x: tier %s, bad_metadata %d, last_seen %s; want hot, %d, %s",
					r.InfoHash, r.Tier, r.BadMetadata, schema.Time(r.LastSeen), tt.wantBad, schema.Time(seen))
			}
		})
	}
	if st.Reactivated != 1 || st.Rewarmed != 1 {
		t.Errorf("reactivated %d, rewarmed %d; want 1 and 1", st.Reactivated, st.Rewarmed)
	}
}
