package dedup

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestReactivatedCountsOnlyPulledRetries: the reactivated counter counts
// the hashes whose next_retry a sighting pulled closer (reactivated_at
// set), as README's rule says; a cold hash already due is only made hot
// again and counts as rewarmed. It counted every cold sighting as
// reactivated (200 "reactivated" hashes that plan-retries then planned as
// plain retries, with reactivated_at null).
func TestReactivatedCountsOnlyPulledRetries(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	day := 24 * time.Hour
	failed := func(h schema.Hash, tier string, next time.Duration) schema.State {
		return schema.State{InfoHash: h, HashType: 1, FirstSeen: t0.Add(-60 * day).UnixMilli(), LastSeen: t0.Add(-40 * day).UnixMilli(),
			SeenCount: 1, MetadataStatus: schema.StatusFailed, LastFailure: schema.OutcomeNoPeers, Attempts: 6, BackoffStep: 5,
			LastAttempt: t0.Add(-30 * day).UnixMilli(), NextRetry: t0.Add(next).UnixMilli(), Tier: tier}
	}
	coldDue := failed(schema.Hash{0x42, 1}, schema.TierCold, -day)   // overdue: just hot again
	coldFar := failed(schema.Hash{0x42, 2}, schema.TierCold, 20*day) // pulled and hot
	hotFar := failed(schema.Hash{0x43, 1}, schema.TierHot, 20*day)   // pulled
	hotDue := failed(schema.Hash{0x43, 2}, schema.TierHot, -day)     // nothing to do
	commitColdHot(t, data, []schema.State{coldDue, coldFar}, []schema.State{hotFar, hotDue})

	seen := t0.Add(time.Hour).UnixMilli()
	pol := schedule.Default()
	st := sightAll(t, dir, data, pol, seen, coldDue, coldFar, hotFar, hotDue)
	s := readState(t, data)
	withAt := 0
	for _, r := range s {
		if r.Reactivated != 0 {
			withAt++
		}
	}
	if st.Reactivated != 2 || st.Rewarmed != 2 || withAt != 2 {
		t.Fatalf("reactivated %d rewarmed %d (want 2 and 2); %d hashes with reactivated_at (want 2)", st.Reactivated, st.Rewarmed, withAt)
	}
	if r := s[coldDue.InfoHash]; r.Tier != schema.TierHot || r.Reactivated != 0 || r.NextRetry != coldDue.NextRetry {
		t.Fatalf("the cold hash already due: %+v, want hot, next_retry kept, reactivated_at null", r)
	}
	if r := s[coldFar.InfoHash]; r.Tier != schema.TierHot || r.Reactivated != seen {
		t.Fatalf("the cold hash due later: %+v, want hot and reactivated", r)
	}
}

// commitColdHot makes a dataset at data whose partition 42 is one cold
// file of cold and partition 43 one hot file of hot (rows of those
// prefixes), as merge and the cold sweep leave them.
func commitColdHot(t *testing.T, data string, cold, hot []schema.State) {
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
	cf, err := dataset.WriteStagedAs(tx, dataset.TableState, "42", schedule.ColdFileName(), cold)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "42", []dataset.FileInfo{cf})
	hf, err := dataset.WriteStaged(tx, dataset.TableState, "43", hot)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableState, "43", []dataset.FileInfo{hf})
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sightAll runs dedup on data (inputs written in dir) with one sighting
// of each of rows' hashes at seen, under pol's reactivation rule.
func sightAll(t *testing.T, dir, data string, pol schedule.Policy, seen int64, rows ...schema.State) Stats {
	t.Helper()
	var obs []schema.Observation
	for _, r := range rows {
		obs = append(obs, schema.Observation{InfoHash: r.InfoHash, HashType: 1, ObservedAt: seen, Source: schema.SourceGetPeers})
	}
	st, err := run(t, data, func(o *Options) {
		o.Reactivate = func(s *schema.State, at, announcedAt int64) bool { return schedule.Reactivate(pol, s, at, announcedAt) }
	}, writeObs(t, dir, obs))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
