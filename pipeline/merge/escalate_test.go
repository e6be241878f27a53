package merge

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestRepeatedPeerFailureEscalatesOnlyWhenEveryPeerTried: merge hands the
// schedule a result's peers_found and peers_tried, so that a second
// peer-level failure in a row moves the hash along its schedule only when
// the attempt tried every peer it found (or its counts are unknown: 0, as
// a null reads). fetch ranks a peer's class above the job's own timeout,
// so an attempt that ran out of time with found peers still queued says
// "rejected" too: that one is retried soon, as the first was, not backed
// off as if the whole swarm were bad. So is a hash_mismatch after a
// peer-level failure, short of proof by distinct sources: fetch dials on
// after a peer's bad metadata, so the job's time can cut it alike.
func TestRepeatedPeerFailureEscalatesOnlyWhenEveryPeerTried(t *testing.T) {
	const soon, back = 10 * time.Minute, 30 * time.Minute // policy defaults: retry_soon, backoff.<class>[0]
	const rejected, mismatch = schema.OutcomeRejected, schema.OutcomeHashMismatch
	tests := []struct {
		name         string
		second       bool          // a peer-level failure came before this one
		class        string        // this result's outcome
		found, tried int32         // this result's peers_found, peers_tried
		wantDelay    time.Duration // ±20% jitter
		wantStep     int32
	}{
		{"first, tried all", false, rejected, 3, 3, soon, 0},
		{"first, tried some", false, rejected, 3, 1, soon, 0},
		{"second, tried all", true, rejected, 3, 3, back, 1},
		{"second, tried some", true, rejected, 3, 1, soon, 0},
		{"second, counts unknown", true, rejected, 0, 0, back, 1},
		{"second, tried unknown", true, rejected, 3, 0, back, 1},
		{"hash_mismatch after one, tried all", true, mismatch, 4, 4, back, 1},
		{"hash_mismatch after one, tried some", true, mismatch, 4, 2, soon, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hashAt(0x45, 1)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			now := t0
			if tt.second {
				j := planJobs(t, dir, now, 1)[0]
				r := failure(j, schema.OutcomeRejected, now+minute)
				r.PeersFound, r.PeersTried = 1, 1
				runMerge(t, dir, now+2*minute, writeResults(t, []schema.Result{r}))
				now = stateOf(t, dir)[h].NextRetry
			}
			jobs := planJobs(t, dir, now, 1)
			if len(jobs) != 1 {
				t.Fatalf("planned %d jobs at %v, want the hash", len(jobs), tm(now))
			}
			at := now + minute
			r := failure(jobs[0], tt.class, at, schema.PeerFailure{Addr: "127.0.0.1:7001", Class: tt.class, At: at})
			r.PeersFound, r.PeersTried = tt.found, tt.tried
			if st := runMerge(t, dir, at+minute, writeResults(t, []schema.Result{r})); st.Applied != 1 {
				t.Fatalf("stats %+v, want the result applied", st)
			}
			got := stateOf(t, dir)[h]
			d := time.Duration(got.NextRetry-at) * time.Millisecond
			if d < tt.wantDelay*8/10 || d > tt.wantDelay*12/10 || got.BackoffStep != tt.wantStep {
				t.Errorf("next_retry %v after the attempt, backoff_step %d; want %v ±20%%, step %d",
					d, got.BackoffStep, tt.wantDelay, tt.wantStep)
			}
			wantBad := int32(0)
			if tt.class == mismatch {
				wantBad = 1 // one source: not proven bad
			}
			if got.BadMetadata != wantBad {
				t.Errorf("bad_metadata %d, want %d", got.BadMetadata, wantBad)
			}
		})
	}
}
