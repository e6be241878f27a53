package merge

import (
	"fmt"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestArchiveFetchedOnlyWhenThePolicySaysSo: a fetched hash unseen for
// archive.fetched_unseen moves to the cold tier when merge rewrites its
// partition; with the default (0) it stays hot however long unseen.
func TestArchiveFetchedOnlyWhenThePolicySaysSo(t *testing.T) {
	fetched := newHash(hashAt(0x31, 1), t0)
	schedule.ApplySuccess(&fetched, t0+minute)
	other := newHash(hashAt(0x31, 2), t0+39*day)
	for _, tt := range []struct {
		after    schedule.Duration
		wantTier string
	}{
		{0, schema.TierHot},
		{schedule.Duration(30 * schedule.Day), schema.TierCold},
		{schedule.Duration(50 * schedule.Day), schema.TierHot}, // only 40 days unseen
	} {
		t.Run(fmt.Sprint(tt.after), func(t *testing.T) {
			dir := makeDataset(t, []schema.State{fetched, other})
			p := schedule.Default()
			p.Archive.FetchedUnseen = tt.after
			if err := schedule.Save(dir, p); err != nil {
				t.Fatal(err)
			}
			now := t0 + 40*day
			jobs := planJobs(t, dir, now, 10)
			if len(jobs) != 1 || jobs[0].InfoHash != other.InfoHash {
				t.Fatalf("jobs %+v, want the new hash only", jobs)
			}
			st := runMerge(t, dir, now+minute, writeResults(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, now)}))
			s := stateOf(t, dir)
			if got := s[fetched.InfoHash]; got.Tier != tt.wantTier || got.MetadataStatus != schema.StatusFetched {
				t.Fatalf("fetched hash: tier %s status %s, want %s fetched", got.Tier, got.MetadataStatus, tt.wantTier)
			}
			wantArchived := int64(0)
			if tt.wantTier == schema.TierCold {
				wantArchived = 1
			}
			if st.Archived != wantArchived {
				t.Fatalf("archived %d, want %d", st.Archived, wantArchived)
			}
			if s[other.InfoHash].Tier != schema.TierHot {
				t.Fatalf("the failed hash seen a day ago went cold")
			}
		})
	}
}
