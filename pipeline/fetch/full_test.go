package fetch

import (
	"maps"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// takeSink takes the first take rows written to it and refuses the rest
// as a full disk does.
type takeSink struct {
	take int
	rows []schema.Result
}

func (s *takeSink) Write(rs []schema.Result) error {
	n := min(s.take-len(s.rows), len(rs))
	s.rows = append(s.rows, rs[:n]...)
	if n < len(rs) {
		return &rowio.FullError{Name: "out.parquet", Err: syscall.ENOSPC, Taken: n}
	}
	return nil
}

// TestReleaseRefusedCounts: a job whose result a full output refused
// counts as unfinished, not attempted, and its outcome and peer failures
// are taken back, whether its released row fits, is refused too, or it
// has no lease to release; a refused released row was unfinished
// already. Jobs = Attempted + LeaseExpired + Unfinished throughout, the
// outcomes add up to Attempted, and Released <= Unfinished.
func TestReleaseRefusedCounts(t *testing.T) {
	ok := schema.Result{InfoHash: schema.Hash{1}, Attempt: 1, LeaseID: "L1", Outcome: schema.OutcomeOK}
	failed := schema.Result{InfoHash: schema.Hash{2}, Attempt: 1, LeaseID: "L1", Outcome: schema.OutcomeTimeout,
		PeerFailures: []schema.PeerFailure{{Class: schema.OutcomeTimeout}, {Class: schema.OutcomeConnectFailed}}}
	unleased := schema.Result{InfoHash: schema.Hash{3}, Attempt: 1, Outcome: schema.OutcomeNoPeers}
	released := schema.Result{InfoHash: schema.Hash{4}, Attempt: 1, LeaseID: "L1", Outcome: schema.OutcomeReleased}
	tests := []struct {
		name         string
		refused      []schema.Result
		take         int // released rows the output still takes
		wantRows     int
		wantOutcomes map[string]int64
		wantFailures map[string]int64
	}{
		{"released rows fit", []schema.Result{ok, failed}, 2, 2, map[string]int64{schema.OutcomeNoPeers: 1}, map[string]int64{}},
		{"released rows refused", []schema.Result{ok, failed}, 0, 0, map[string]int64{schema.OutcomeNoPeers: 1}, map[string]int64{}},
		{"one of two fits", []schema.Result{failed, ok}, 1, 1, map[string]int64{schema.OutcomeNoPeers: 1}, map[string]int64{}},
		{"no lease", []schema.Result{unleased}, 1, 0, map[string]int64{schema.OutcomeOK: 1, schema.OutcomeTimeout: 1},
			map[string]int64{schema.OutcomeTimeout: 1, schema.OutcomeConnectFailed: 1}},
		{"released row refused", []schema.Result{released}, 1, 0,
			map[string]int64{schema.OutcomeOK: 1, schema.OutcomeTimeout: 1, schema.OutcomeNoPeers: 1},
			map[string]int64{schema.OutcomeTimeout: 1, schema.OutcomeConnectFailed: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFetcher(t, testOptions())
			c := f.stats
			attempt := func(r schema.Result) { // as Fetch counts one
				c.jobs.Add(1)
				c.attempted.Add(1)
				classes := make([]string, len(r.PeerFailures))
				for i, pf := range r.PeerFailures {
					classes[i] = pf.Class
				}
				c.addOutcome(r.Outcome, classes)
			}
			for _, r := range []schema.Result{ok, failed, unleased} {
				attempt(r)
			}
			c.jobs.Add(1) // released: as releaseLease counts one
			c.unfinished.Add(1)
			c.released.Add(1)
			out := &takeSink{take: tt.take}
			f.releaseRefused(out, tt.refused, &rowio.FullError{Name: "out.parquet", Err: syscall.ENOSPC})
			for _, r := range out.rows {
				if r.Outcome != schema.OutcomeReleased || r.LeaseID != "L1" {
					t.Errorf("row %x: %s lease %q; want a released row for lease L1", r.InfoHash, r.Outcome, r.LeaseID)
				}
			}
			st := f.Stats()
			refusedJobs := int64(0)
			for _, r := range tt.refused {
				if r.Outcome != schema.OutcomeReleased {
					refusedJobs++
				}
			}
			if st.Jobs != 4 || st.Attempted != 3-refusedJobs || st.Unfinished != 1+refusedJobs || len(out.rows) != tt.wantRows {
				t.Errorf("%d jobs, %d attempted, %d unfinished, %d rows written; want 4, %d, %d, %d",
					st.Jobs, st.Attempted, st.Unfinished, len(out.rows), 3-refusedJobs, 1+refusedJobs, tt.wantRows)
			}
			checkIdentity(t, st)
			if !maps.Equal(st.Outcomes, tt.wantOutcomes) || !maps.Equal(st.PeerFailures, tt.wantFailures) {
				t.Errorf("outcomes %v, peer failures %v; want %v, %v", st.Outcomes, st.PeerFailures, tt.wantOutcomes, tt.wantFailures)
			}
		})
	}
}

// checkIdentity checks the identities Stats documents: Jobs = Attempted +
// LeaseExpired + Unfinished, Released <= Unfinished, and the outcomes add
// up to Attempted.
func checkIdentity(t *testing.T, st Stats) {
	t.Helper()
	var sum int64
	for _, n := range st.Outcomes {
		sum += n
	}
	if st.Jobs != st.Attempted+st.LeaseExpired+st.Unfinished || st.Released > st.Unfinished || sum != st.Attempted {
		t.Errorf("%d jobs, %d attempted (outcomes add up to %d), %d lease expired, %d unfinished, %d released: the counts do not add up",
			st.Jobs, st.Attempted, sum, st.LeaseExpired, st.Unfinished, st.Released)
	}
}
