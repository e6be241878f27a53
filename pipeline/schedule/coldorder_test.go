package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestColdUntriedPlannedWithinBound simulates a cold window under a
// sustained backlog, pass after pass: each pass plans the best capacity
// of its due cold hashes (PriorityOf, as the cold pool does), fails them
// (no_peers: due again about 30 days on), and more arrive than it takes
// (failed hashes already due longer than their last delay, never-tried
// ones newly archived). A never-tried cold hash, idle, must be planned
// within the passes it takes to plan every hash due before it, capacity
// a pass. Ranked by activity behind the long-overdue failed hashes, it
// was never planned: they never ran out.
func TestColdUntriedPlannedWithinBound(t *testing.T) {
	p := Default()
	now0 := t0 + 400*day
	for _, capacity := range []int{1, 2, 5} {
		for _, arrivals := range []int{1, 2, 3} { // times capacity, each kind
			for _, backlog := range []int{0, 10, 100} {
				for seed := range uint64(3) {
					name := fmt.Sprintf("capacity %d arrivals %dx backlog %d seed %d", capacity, arrivals, backlog, seed)
					r := rand.New(rand.NewPCG(seed, 18))
					n := uint64(0)
					mk := func(status string, since, lastAttempt int64) schema.State {
						n++
						st := newState(n)
						st.Tier, st.MetadataStatus = schema.TierCold, status
						st.FirstSeen, st.LastSeen = since-day, since-day
						st.Activity = r.Float64() * 64
						st.NextRetry = since
						if status == schema.StatusFailed {
							st.Attempts, st.LastAttempt, st.LastFailure = 6, lastAttempt, schema.OutcomeNoPeers
							st.BackoffStep = 6
						}
						return st
					}
					// The hash to watch: never tried, idle, folded in 100
					// days before the first pass.
					target := mk(schema.StatusNew, now0-100*day, 0)
					target.Activity = 0
					states := []schema.State{target}
					// The backlog: failed and never-tried cold hashes due
					// from 200 to 31 days before the first pass, starved.
					for range backlog {
						since := now0 - 31*day - r.Int64N(170*day)
						states = append(states, mk(schema.StatusFailed, since, since-30*day))
						states = append(states, mk(schema.StatusNew, since-r.Int64N(day), 0))
					}
					ahead := 0 // hashes due before the target: its bound
					for _, st := range states[1:] {
						if st.NextRetry < target.NextRetry {
							ahead++
						}
					}
					bound := ahead/capacity + 1
					planned := 0 // the pass that planned the target (0: none)
					for pass := 1; pass <= bound+20 && planned == 0; pass++ {
						now := now0 + int64(pass-1)*day
						for range arrivals * capacity {
							states = append(states, mk(schema.StatusFailed, now-31*day, now-61*day))
							states = append(states, mk(schema.StatusNew, now-90*day, 0))
						}
						var due []int
						prio := make([]Priority, len(states))
						for i := range states {
							if states[i].NextRetry <= now {
								due = append(due, i)
								prio[i] = PriorityOf(p, &states[i], now, 1)
							}
						}
						slices.SortFunc(due, func(a, b int) int { return prio[a].Compare(prio[b]) })
						for _, i := range due[:min(capacity, len(due))] {
							if i == 0 {
								planned = pass
							}
							if err := ApplyFailure(p, &states[i], schema.OutcomeNoPeers, now, false); err != nil {
								t.Fatal(err)
							}
						}
					}
					if planned == 0 || planned > bound {
						t.Fatalf("%s: the never-tried cold hash was planned in pass %d (0: never in %d), want by pass %d (%d hashes due before it, %d a pass)",
							name, planned, bound+20, bound, ahead, capacity)
					}
				}
			}
		}
	}
}
