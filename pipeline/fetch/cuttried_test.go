package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestCutOffPeerLeavesTheSwarmUnjudged: a hash whose last attempt failed
// peer-level is attempted again with two peers, one that rejects and one
// that stalls, dialled in turn. When the job's deadline cuts the stalling
// peer off, that peer gave no answer: peers_tried is 1 of 2 found, and
// the scheduler (schedule.ApplyResultFailure, as merge applies it)
// retries the hash soon, its backoff step unmoved. When the stall ends
// by the peer's own PeerTimeout, every peer found failed: 2 of 2 tried,
// and the repeated peer-level failure moves the hash along its schedule.
// A cut-off peer used to count as tried, and the first case backed the
// hash off too, for an answer the attempt never got.
func TestCutOffPeerLeavesTheSwarmUnjudged(t *testing.T) {
	tor := badpeers.NewTorrent(14, 1, 10)
	reject := startPeer(t, badpeers.Reject, tor)
	stall := startPeer(t, badpeers.Stall, tor)
	p := schedule.Default()
	tests := []struct {
		name        string
		peerTimeout time.Duration
		cut         bool // the job's deadline passes once the stall is reached
		tried       int32
		wantStep    int32 // backoff_step after the result is applied
	}{
		{"the job's deadline cuts the stall off", backstop, true, 1, 0},
		{"the stall ends by its own peer timeout", stallTimeout, false, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions()
			o.PeersPerHash, o.PeerTimeout = 1, tt.peerTimeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var f *Fetcher
			if tt.cut {
				// With one peer at a time, the stall's connection (the
				// second) comes after the attempt took the reject.
				o.cutJob = func(_ schema.Job, cut func()) {
					go func() {
						for f.Stats().ConnectsOK < 2 {
							if ctx.Err() != nil {
								return
							}
							time.Sleep(time.Millisecond)
						}
						cut()
					}()
				}
			}
			f = newFetcher(t, o)
			job := schema.Job{InfoHash: tor.InfoHash, HashType: schema.HashV1, Attempt: 2, LeaseID: "cut",
				Peers: []string{reject.Addr(), stall.Addr()}}
			r, ok := f.Fetch(ctx, job)
			if !ok {
				t.Fatal("attempt abandoned")
			}
			checkResult(t, job, r)
			if st := f.Stats(); st.ConnectsOK != 2 {
				t.Fatalf("%d peers connected to, want both (%+v)", st.ConnectsOK, st)
			}
			if r.Outcome != schema.OutcomeRejected || r.PeersFound != 2 || r.PeersTried != tt.tried {
				t.Fatalf("outcome %s (%s), %d of %d peers tried; want rejected, %d of 2",
					r.Outcome, r.Detail, r.PeersTried, r.PeersFound, tt.tried)
			}
			// The hash's first attempt failed peer-level, its one peer
			// tried: a soft failure, retried soon.
			st := schema.State{InfoHash: tor.InfoHash, MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
			first := schema.Result{Outcome: schema.OutcomeRejected, AttemptedAt: r.AttemptedAt - time.Hour.Milliseconds(),
				PeersFound: 1, PeersTried: 1}
			if err := schedule.ApplyResultFailure(p, &st, &first, 0); err != nil {
				t.Fatal(err)
			}
			if st.BackoffStep != 0 {
				t.Fatalf("backoff_step %d after a first peer-level failure, want 0", st.BackoffStep)
			}
			if err := schedule.ApplyResultFailure(p, &st, &r, 0); err != nil {
				t.Fatal(err)
			}
			if st.BackoffStep != tt.wantStep {
				t.Fatalf("backoff_step %d after the result (%d of %d peers tried), want %d",
					st.BackoffStep, r.PeersTried, r.PeersFound, tt.wantStep)
			}
		})
	}
}
