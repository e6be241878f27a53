package plan

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestColdUntriedAmongTheLongOverdue: the cold tier's one job goes to the
// hash due longest, a never-tried cold hash waiting since it was first
// folded in, not to one of the failed cold hashes due longer than their
// last delay (starved), which always went first before and under a
// sustained backlog never ran out (schedule.TestColdUntriedPlannedWithinBound);
// a failed one due before it still goes first.
func TestColdUntriedAmongTheLongOverdue(t *testing.T) {
	now := ms(t0) + 400*day
	for _, tc := range []struct {
		name         string
		failedSince  int64 // when the starved failed cold hashes fell due
		untriedFirst bool
	}{
		{"failed due later", now - 70*day, true},
		{"failed due earlier", now - 250*day, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			untried := newHash(hashAt(0x00, 1), now-200*day) // folded in 200 days ago, never tried
			untried.NextRetry, untried.Tier, untried.Activity = now-200*day, schema.TierCold, 0
			states := []schema.State{untried}
			for i := range uint64(5) { // failed 6 times, due 30 days after the last: starved
				st := failedHash(t, hashAt(0x00, 10+i), now-300*day, tc.failedSince-30*day)
				st.Attempts, st.NextRetry, st.Tier, st.Activity = 6, tc.failedSince, schema.TierCold, 8
				states = append(states, st)
			}
			for i := range uint64(40) { // hot retries to fill the rest of --limit
				states = append(states, failedHash(t, hashAt(byte(0x20+i), i), now-2*day, now-day))
			}
			dir := makeDataset(t, states, nil)
			jobs, st := runPlan(t, dir, now, 20, nil) // cold reserve: 1 job
			if st.DueCold != 6 || st.PlannedCold != 1 {
				t.Fatalf("due_cold %d, planned_cold %d; want 6 and 1", st.DueCold, st.PlannedCold)
			}
			_, got := jobSet(jobs)[untried.InfoHash]
			if got != tc.untriedFirst {
				t.Errorf("never-tried cold hash planned: %v, want %v", got, tc.untriedFirst)
			}
		})
	}
}
