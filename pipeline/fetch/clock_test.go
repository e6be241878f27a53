package fetch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/clock"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestRunOnItsClock: with Options.Clock set to a time far from the wall
// clock (--now), in the past or the future, fetch stamps attempted_at and
// peer_failures' at from that time on, and judges leases (lease_until: not
// started when over, cut off when it ends) and the jobs file's penalties
// by it, not by the wall clock.
func TestRunOnItsClock(t *testing.T) {
	good := badpeers.NewTorrent(61, 1, 5)
	goodPeer := startPeer(t, badpeers.Good, good)
	reject := startPeer(t, badpeers.Reject)
	penalised := startPeer(t, badpeers.NoExtension)
	served := startPeer(t, badpeers.Reject) // its penalty has ended
	stall := startPeer(t, badpeers.Stall)
	tests := map[string]time.Time{
		"past":   time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC),
		"future": time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second).UTC(),
	}
	for name, at := range tests {
		t.Run(name, func(t *testing.T) {
			ms := func(d time.Duration) int64 { return at.Add(d).UnixMilli() }
			rejH, avoidH, servedH, expiredH, stallH := schema.Hash{0xc1}, schema.Hash{0xc2}, schema.Hash{0xc3}, schema.Hash{0xc4}, schema.Hash{0xc5}
			// stallH's lease ends 4 s into the run: its attempt is cut off
			// then (a stalling peer, and no other limit before a minute).
			lease := ms(time.Hour)
			jobs := []schema.Job{
				{InfoHash: good.InfoHash, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{goodPeer.Addr()}},
				{InfoHash: rejH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{reject.Addr()}},
				{InfoHash: avoidH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{penalised.Addr()}},
				{InfoHash: servedH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{served.Addr()}},
				{InfoHash: expiredH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: ms(-time.Minute), Peers: []string{goodPeer.Addr()}},
				{InfoHash: stallH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: ms(4 * time.Second), Peers: []string{stall.Addr()}},
			}
			avoid, _ := schema.EncodeAvoidPeers([]schema.AvoidedPeer{
				{Addr: penalised.Addr(), Until: ms(time.Hour)}, {Addr: served.Addr(), Until: ms(-time.Minute)}})
			dir := t.TempDir()
			in := filepath.Join(dir, "jobs.parquet")
			writeJobsWithAvoid(t, in, nil, jobs, avoid)
			o := testOptions()
			o.PeerTimeout = backstop // only the lease may end the stalling peer
			o.Input, o.Output = in, filepath.Join(dir, "results.parquet")
			start := time.Now()
			o.Clock = clock.StartingAt(at)
			st, err := Run(context.Background(), o)
			if exitcode.Of(err) != exitcode.Partial { // the expired lease
				t.Fatalf("err %v, want partial (one lease over)", err)
			}
			end := at.Add(time.Since(start)).UnixMilli()
			onClock := func(what string, ms int64) {
				t.Helper()
				if ms < at.UnixMilli() || ms > end {
					t.Errorf("%s %v, want on the run's clock: between %v and %v", what, schema.Time(ms), at, schema.Time(end))
				}
			}
			res := readResults(t, o.Output)
			if st.LeaseExpired != 1 || len(res) != len(jobs)-1 {
				t.Fatalf("%d lease expired, %d results; want the one lease over on the run's clock left, the others attempted", st.LeaseExpired, len(res))
			}
			if _, ok := res[expiredH]; ok {
				t.Errorf("the job whose lease is over on the run's clock was attempted")
			}
			for h, r := range res {
				onClock("attempted_at of "+schema.Hex(h), r.AttemptedAt)
				for _, pf := range r.PeerFailures {
					onClock("peer_failures.at of "+pf.Addr, pf.At)
				}
			}
			if r := res[good.InfoHash]; r.Outcome != schema.OutcomeOK {
				t.Errorf("good torrent: %s (%s)", r.Outcome, r.Detail)
			}
			if r := res[rejH]; r.Outcome != schema.OutcomeRejected || len(r.PeerFailures) != 1 {
				t.Errorf("rejecting peer: %s, peer_failures %+v", r.Outcome, r.PeerFailures)
			}
			if st.PeersAvoided != 1 || res[avoidH].PeersTried != 0 || res[servedH].PeersTried != 1 {
				t.Errorf("peers_avoided %d, tried %d and %d; want the peer penalised until TIME+1h skipped and the one until TIME-1m tried",
					st.PeersAvoided, res[avoidH].PeersTried, res[servedH].PeersTried)
			}
			// The stalled attempt ended when the run's clock read its
			// lease_until: neither at once nor at the wall clock's.
			r := res[stallH]
			if r.TotalMs == nil {
				t.Fatalf("stalled attempt without total_ms: %+v", r)
			}
			if endedAt := r.AttemptedAt + *r.TotalMs; endedAt < jobs[5].LeaseUntil-500 || endedAt > jobs[5].LeaseUntil+3000 {
				t.Errorf("stalled attempt ended at %v (%d ms), want when its lease ends, %v", schema.Time(endedAt), *r.TotalMs, schema.Time(jobs[5].LeaseUntil))
			}
			if r.Outcome != schema.OutcomeTimeout || len(r.PeerFailures) != 0 {
				t.Errorf("stalled attempt: %s, peer_failures %+v; want timeout, the peer cut off unblamed", r.Outcome, r.PeerFailures)
			}
		})
	}
}
