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
//
// The stalling job's lease ends 30 s into the run: its attempt must start
// before, which a loaded machine does with room to spare, and the test
// does not wait for it. The run hands the lease's deadline (the wall-clock
// time at which its clock reads lease_until) to Options.leaseDeadline,
// which checks it and passes it at once: the attempt is then cut off as
// the lease's end cuts it off (blame_test.go cuts off a stalled exchange
// by the job's deadline).
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
			// stallH's lease ends stallLease into the run: its attempt is
			// cut off then (a stalling peer, and no other limit before a
			// minute), when leaseDeadline passes it.
			const stallLease = 30 * time.Second
			lease := ms(time.Hour)
			jobs := []schema.Job{
				{InfoHash: good.InfoHash, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{goodPeer.Addr()}},
				{InfoHash: rejH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{reject.Addr()}},
				{InfoHash: avoidH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{penalised.Addr()}},
				{InfoHash: servedH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: lease, Peers: []string{served.Addr()}},
				{InfoHash: expiredH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: ms(-time.Minute), Peers: []string{goodPeer.Addr()}},
				{InfoHash: stallH, HashType: 1, Attempt: 1, LeaseID: "L", LeaseUntil: ms(stallLease), Peers: []string{stall.Addr()}},
			}
			avoid, _ := schema.EncodeAvoidPeers([]schema.AvoidedPeer{
				{Addr: penalised.Addr(), Until: ms(time.Hour)}, {Addr: served.Addr(), Until: ms(-time.Minute)}})
			dir := t.TempDir()
			in := filepath.Join(dir, "jobs.parquet")
			writeJobsWithAvoid(t, in, nil, jobs, avoid)
			o := testOptions()
			o.PeerTimeout = backstop // only the lease may end the stalling peer
			o.Input, o.Output = in, filepath.Join(dir, "results.parquet")
			var stallDeadline time.Time // where the run put stallH's lease end
			o.leaseDeadline = func(job schema.Job, deadline time.Time) time.Time {
				if job.InfoHash != stallH {
					return deadline
				}
				stallDeadline = deadline
				return time.Now()
			}
			start := time.Now()
			o.Clock = clock.StartingAt(at)
			clockSet := time.Now()
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
			// The stalled attempt's deadline is when the run's clock
			// reads its lease_until (stallLease after the clock was
			// set, to the millisecond), not when the wall clock does.
			if stallDeadline.Before(start.Add(stallLease-time.Millisecond)) || stallDeadline.After(clockSet.Add(stallLease+time.Millisecond)) {
				t.Errorf("stalled attempt's deadline %v, want when the run's clock reads its lease_until (%v into the run, %v to %v)",
					stallDeadline, stallLease, start.Add(stallLease), clockSet.Add(stallLease))
			}
			r := res[stallH]
			if r.Outcome != schema.OutcomeTimeout || len(r.PeerFailures) != 0 {
				t.Errorf("stalled attempt: %s, peer_failures %+v; want timeout, the peer cut off unblamed", r.Outcome, r.PeerFailures)
			}
		})
	}
}
