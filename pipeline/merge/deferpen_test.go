package merge

import (
	"math"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestPenalisedPeerDefersOtherHash is the reviewer's repro of a peer
// penalised for hash A making hash B pay. Pass 1: A's peer P rejects it
// (P penalised for an hour), B's only peer Q fails its handshake. Pass 2,
// P's penalty running: B's attempt finds only P and skips it. fetch wrote
// that as "rejected", which merge counted against B: attempts 1→2 and, a
// second soft failure in a row, backoff_step 0→1, though nobody was
// dialled for B. Written as peers_penalised with retry_after (P's penalty
// end), it counts nothing against B, and B waits until P's penalty is over.
func TestPenalisedPeerDefersOtherHash(t *testing.T) {
	const p, q = "127.0.0.1:7001", "127.0.0.1:7002"
	tests := []struct {
		name      string
		outcome   string // B's second attempt, as fetch writes it
		attempts  int32
		step      int32
		failure   string
		pastUntil bool // next_retry at or after P's penalty end
		deferred  int64
	}{
		{"peers_penalised: deferred", schema.OutcomePeersPenalised, 1, 0, schema.OutcomeHandshakeFailed, true, 1},
		{"rejected, as fetch wrote it before: B pays for A's peer", schema.OutcomeRejected, 2, 1, schema.OutcomeRejected, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := hashAt(0x61, 1), hashAt(0x62, 2)
			dir := makeDataset(t, []schema.State{newHash(a, t0), newHash(b, t0)})
			jobs := planJobs(t, dir, t0+minute, 10)
			at := t0 + 2*minute
			var rs []schema.Result
			for _, j := range jobs {
				if j.InfoHash == a {
					rs = append(rs, failure(j, schema.OutcomeRejected, at, schema.PeerFailure{Addr: p, Class: schema.OutcomeRejected, At: at}))
				} else {
					rs = append(rs, failure(j, schema.OutcomeHandshakeFailed, at, schema.PeerFailure{Addr: q, Class: schema.OutcomeHandshakeFailed, At: at}))
				}
			}
			runMerge(t, dir, at+minute, writeResults(t, rs))
			var until int64
			for _, pp := range readTable[schema.PeerPenalty](t, dir, "peers") {
				if pp.Addr == p {
					until = pp.Until
				}
			}
			st := stateOf(t, dir)[b]
			if until <= at || st.Attempts != 1 || st.BackoffStep != 0 {
				t.Fatalf("after pass 1: P's penalty until %d, B attempts %d step %d", until, st.Attempts, st.BackoffStep)
			}
			now := st.NextRetry + minute // B due, P still penalised
			var jb []schema.Job
			for _, j := range planJobs(t, dir, now, 10) {
				if j.InfoHash == b {
					jb = append(jb, j)
				}
			}
			if len(jb) != 1 || now >= until {
				t.Fatalf("pass 2 at %d (P penalised until %d): %d jobs for B, want 1", now, until, len(jb))
			}
			r := failure(jb[0], tt.outcome, now+minute)
			r.PeersFound, r.Detail = 0, "all 1 peers found are penalised (avoided); none tried"
			if tt.outcome == schema.OutcomePeersPenalised {
				r.RetryAfter = until
			}
			stats := runMerge(t, dir, now+2*minute, writeResults(t, []schema.Result{r}))
			st = stateOf(t, dir)[b]
			if st.Attempts != tt.attempts || st.BackoffStep != tt.step || st.LastFailure != tt.failure ||
				(st.NextRetry >= until) != tt.pastUntil || st.LeaseID != "" || st.LastAttempt != now+minute {
				t.Fatalf("B after pass 2: attempts %d backoff_step %d last_failure %q next_retry %+d ms past P's penalty, "+
					"lease %q, last_attempt %d; want %d %d %q, past it %v, no lease, %d", st.Attempts, st.BackoffStep,
					st.LastFailure, st.NextRetry-until, st.LeaseID, st.LastAttempt, tt.attempts, tt.step, tt.failure,
					tt.pastUntil, now+minute)
			}
			if stats.Deferred != tt.deferred || stats.Applied != 1-tt.deferred || stats.PeerPenalties != 0 {
				t.Fatalf("stats: failures_deferred %d failures_applied %d peer_penalties %d; want %d %d 0",
					stats.Deferred, stats.Applied, stats.PeerPenalties, tt.deferred, 1-tt.deferred)
			}
			// The dataset keeps the count (status's only source for it: the
			// state marks no deferral).
			if got := datasettest.Current(t, dir).Totals[dataset.TotalMergeDeferred]; got != tt.deferred {
				t.Fatalf("total %s = %d, want %d", dataset.TotalMergeDeferred, got, tt.deferred)
			}
			if leases := readTable[schema.Lease](t, dir, "leases"); len(leases) != 0 {
				t.Fatalf("leases after pass 2: %+v; want B's released", leases)
			}
		})
	}
}

// TestPeersPenalisedNeedsRetryAfter: a peers_penalised row is a deferral
// to its retry_after; one without it (null: a hand-made file, or one
// rewritten by a tool that dropped the column), or with one more than
// schedule.MaxDuration after attempted_at (no penalty lasts that long:
// at 2^63 next_retry wrapped to ~292 million years BC), is bad input
// naming the file and row, nothing applied, as a peer failure without its
// time is.
func TestPeersPenalisedNeedsRetryAfter(t *testing.T) {
	at := t0 + minute
	tests := []struct {
		name       string
		retryAfter int64
		want       string
	}{
		{"null", 0, "peers_penalised without retry_after"},
		{"past MaxDuration", at + schedule.MaxDuration.Milliseconds() + 1, "is more than 36500 days after attempted_at"},
		{"at the end of int64", math.MaxInt64, "is more than 36500 days after attempted_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hashAt(0x63, 1)
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			j := planJobs(t, dir, t0, 1)[0]
			ok := failure(j, schema.OutcomePeersPenalised, at)
			ok.RetryAfter = at + schedule.MaxDuration.Milliseconds() // the longest a penalty lasts: taken
			bad := failure(j, schema.OutcomePeersPenalised, at)
			bad.RetryAfter = tt.retryAfter
			res := writeResults(t, []schema.Result{ok, bad})
			_, err := tryMerge(dir, t0+2*minute, res)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), res+": row 2: "+schema.Hex(h)+": ") ||
				!strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v; want bad input naming %s, row 2 and the hash: %q", err, res, tt.want)
			}
			if st := stateOf(t, dir)[h]; st.LastAttempt != 0 || st.NextRetry != 0 {
				t.Fatalf("state %+v; want nothing applied", st)
			}
		})
	}
}
