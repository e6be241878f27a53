package merge

import (
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestUnionRepairsAnOlderOther: merge --from reads the other dataset as
// it is, and one of a format before 12 still has the damage fetch's old
// check of a v2 claim did, which the migration repairs in a dataset it
// opens: the union repairs those rows as it reads them (at its clock), so
// that neither a hash only the other knows nor one the dataset has
// already repaired comes back failed with bad_metadata 2, its avoid_peers
// and a 30-day wait. A dataset of format 12 is taken as it is.
func TestUnionRepairsAnOlderOther(t *testing.T) {
	victim := func(h schema.Hash) schema.State {
		st := newHash(h, t0)
		st.HashType, st.InfoHashV2, st.InfoHashV2Source = schema.HashV2, v2Of(h, 7), schema.SourceImport
		st.MetadataStatus, st.Attempts, st.LastAttempt, st.LastFailure = schema.StatusFailed, 2, t0+hour, schema.OutcomeHashMismatch
		st.LastFailureAt, st.NextRetry, st.BackoffStep, st.BadMetadata = t0+hour, t0+30*day, 1, 2
		st.AvoidPeers = []string{"127.0.0.1:1", "127.0.0.1:2"}
		return st
	}
	only, both := hashAt(0x51, 1), hashAt(0x52, 1)
	now := t0 + 2*day
	for _, tt := range []struct {
		format   int
		repaired bool
	}{{11, true}, {dataset.FormatVersion, false}} {
		t.Run(map[bool]string{true: "format 11", false: "current format"}[tt.repaired], func(t *testing.T) {
			repairedBoth := victim(both)
			repairedBoth.BadMetadata, repairedBoth.AvoidPeers, repairedBoth.NextRetry = 0, nil, t0+day
			mine := makeDataset(t, []schema.State{repairedBoth})
			other := makeDataset(t, []schema.State{victim(only), victim(both)})
			datasettest.SetFormatVersion(t, other, tt.format)
			runFromT(t, mine, other, now)
			got := stateOf(t, mine)
			// The later next_retry at a tie of last_attempt: the other's,
			// repaired (due at the run's clock) or as it stands.
			wantRetry := now
			if !tt.repaired {
				wantRetry = t0 + 30*day
			}
			for h, attempts := range map[schema.Hash]int32{only: 2, both: 4} { // two histories: added
				st := got[h]
				if repaired := st.BadMetadata == 0 && len(st.AvoidPeers) == 0; repaired != tt.repaired || st.NextRetry != wantRetry ||
					st.Attempts != attempts || st.LastFailure != schema.OutcomeHashMismatch || st.BackoffStep != 1 {
					t.Errorf("%x: bad_metadata %d, avoid_peers %v, next_retry %d, attempts %d, last_failure %s, backoff_step %d;"+
						" want repaired %v, next_retry %d, the history kept", h[:2], st.BadMetadata, st.AvoidPeers, st.NextRetry,
						st.Attempts, st.LastFailure, st.BackoffStep, tt.repaired, wantRetry)
				}
			}
		})
	}
}
