package plan

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestStarvedRetryIsPlanned: under a backlog of retries, a failed hash
// that has waited past its next_retry longer than the delay it was given
// goes ahead of fresher, busier retries. Ranked by activity alone it came
// last in every pass (its activity only decays while it waits, and a
// hash never retried never reaches archive.min_attempts to go cold):
// retried never again, a tombstone in all but name.
func TestStarvedRetryIsPlanned(t *testing.T) {
	now := ms(t0) + 60*day
	for _, tc := range []struct {
		name    string
		overdue int64 // how long the stale hash has been due
		want    bool  // planned in a pass of 4 out of 21 due retries
	}{
		{"overdue 29 days after a 1-day delay", 29 * day, true},
		{"overdue 12 hours after a 1-day delay", 12 * hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule.Default()
			// The stale hash: seen once 40 days ago, failed 4 times, its
			// last delay a day (jitter aside), due for tc.overdue.
			stale := newHash(hashAt(0x00, 1), now-40*day)
			stale.MetadataStatus, stale.Attempts, stale.BackoffStep = schema.StatusFailed, 4, 4
			stale.LastFailure = schema.OutcomeNoPeers
			stale.NextRetry = now - tc.overdue
			stale.LastAttempt = stale.NextRetry - day
			states := []schema.State{stale}
			// 20 busy hashes that failed an hour ago, due now: fresher
			// and busier than the stale one.
			for i := range uint64(20) {
				st := newHash(hashAt(byte(0x10+i), i), now-hour)
				st.Activity = 8
				if err := schedule.ApplyFailure(p, &st, schema.OutcomeNoPeers, now-hour, false); err != nil {
					t.Fatal(err)
				}
				st.NextRetry = now - minute
				states = append(states, st)
			}
			dir := makeDataset(t, states, nil)
			jobs, st := runPlan(t, dir, now, 4, nil)
			if st.DueRetry != 21 || len(jobs) != 4 {
				t.Fatalf("due_retry %d, %d jobs; want 21 and 4", st.DueRetry, len(jobs))
			}
			_, got := jobSet(jobs)[stale.InfoHash]
			if got != tc.want {
				t.Errorf("stale hash planned: %v, want %v", got, tc.want)
			}
		})
	}
}
