package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestUnionKeepsAColdFetchedHashCold: the union's tier is hot if either
// record is hot (a sighting newer than the record the schedule comes from
// rewarms it, as dedup's would). A fetched hash is cold when
// archive.fetched_unseen archived it; a union of two such records, or of
// one with a cold failed or new record, kept no sighting newer: it stays
// cold. The union made every fetched hash hot (a rule from before
// archive.fetched_unseen), undoing the archive at each union and moving
// the row from the cold file into the hot ones.
func TestUnionKeepsAColdFetchedHashCold(t *testing.T) {
	h := hashAt(0x41, 1)
	rec := func(status, tier string, seen int64) schema.State {
		st := newHash(h, seen)
		st.MetadataStatus, st.Tier = status, tier
		if status != schema.StatusNew {
			st.Attempts, st.LastAttempt, st.NextRetry = 1, t0+hour, 0
		}
		if status == schema.StatusFailed {
			st.LastFailure, st.LastFailureAt, st.NextRetry = schema.OutcomeNoPeers, t0+hour, t0+30*day
		}
		return st
	}
	fetched, failed, fresh := schema.StatusFetched, schema.StatusFailed, schema.StatusNew
	cold, hot := schema.TierCold, schema.TierHot
	tests := []struct {
		name         string
		mine, theirs schema.State
		want         string
	}{
		{"fetched cold, fetched cold", rec(fetched, cold, t0), rec(fetched, cold, t0), cold},
		{"fetched cold, failed cold", rec(fetched, cold, t0), rec(failed, cold, t0), cold},
		{"failed cold, fetched cold", rec(failed, cold, t0), rec(fetched, cold, t0), cold},
		{"fetched cold, new cold", rec(fetched, cold, t0), rec(fresh, cold, t0), cold},
		{"fetched cold, failed hot", rec(fetched, cold, t0), rec(failed, hot, t0), hot},
		{"fetched hot, fetched cold", rec(fetched, hot, t0), rec(fetched, cold, t0), hot},
		{"fetched cold, sighted later", rec(fetched, cold, t0), rec(fresh, cold, t0+2*hour), hot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mine := makeDataset(t, []schema.State{tt.mine})
			other := makeDataset(t, []schema.State{tt.theirs})
			runFromT(t, mine, other, t0+day)
			got := stateOf(t, mine)[h]
			if got.Tier != tt.want {
				t.Fatalf("tier %s (%s), want %s", got.Tier, got.MetadataStatus, tt.want)
			}
		})
	}
}
