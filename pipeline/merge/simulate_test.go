package merge

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestNoPeersForAYearThroughThePipeline drives plan-retries → (a fetch
// that always finds no peers) → merge with --now for 400 simulated days:
// each hash is retried at 30m, 2h, 8h, 1d, 7d, then every 30d, each delay
// within the jitter band; past the schedule and 90 days unseen it goes
// cold and the cold sweep keeps retrying it; it is never dropped.
func TestNoPeersForAYearThroughThePipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a year of passes")
	}
	p := schedule.Default()
	p.Plan.ColdPartitions = 128 // a cold hash waits at most one pass for the sweep
	hs := []schema.Hash{hashAt(0x11, 1)}
	dir := makeDataset(t, []schema.State{newHash(hs[0], t0)})
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{30 * time.Minute, 2 * time.Hour, 8 * time.Hour, schedule.Day, 7 * schedule.Day, 30 * schedule.Day}
	delays := map[schema.Hash][]int64{}
	wasCold := map[schema.Hash]bool{}
	now := t0
	for now < t0+400*day {
		jobs := planJobs(t, dir, now, 100)
		if len(jobs) > 0 {
			var rs []schema.Result
			for _, j := range jobs {
				rs = append(rs, failure(j, schema.OutcomeNoPeers, now))
			}
			runMerge(t, dir, now+minute, writeResults(t, rs))
		}
		s := stateOf(t, dir)
		next := int64(0)
		for _, h := range hs {
			st, ok := s[h]
			if !ok {
				t.Fatalf("day %d: hash %x is gone from the state", (now-t0)/day, h[:1])
			}
			if len(jobs) > 0 && st.LastAttempt == now {
				delays[h] = append(delays[h], st.NextRetry-now)
			}
			if st.Tier == schema.TierCold {
				wasCold[h] = true
			}
			if next == 0 || st.NextRetry < next {
				next = st.NextRetry
			}
		}
		if next <= now { // due but outside this pass's cold window
			next = now + hour
		}
		now = next
	}
	for _, h := range hs {
		d := delays[h]
		if len(d) < 15 {
			t.Fatalf("%x: %d attempts in 400 days", h[:1], len(d))
		}
		for i, got := range d {
			w := want[min(i, len(want)-1)]
			lo, hi := int64(float64(w.Milliseconds())*(1-p.Jitter))-1, int64(float64(w.Milliseconds())*(1+p.Jitter))+1
			if got < lo || got > hi {
				t.Errorf("%x attempt %d: next retry after %v, want %v ±%.0f%%", h[:1], i+1, time.Duration(got)*time.Millisecond, w, p.Jitter*100)
			}
		}
		if !wasCold[h] {
			t.Errorf("%x never went cold", h[:1])
		}
		if st := stateOf(t, dir)[h]; st.Attempts != int32(len(d)) || st.MetadataStatus != schema.StatusFailed {
			t.Errorf("%x after a year: %+v (%d attempts seen)", h[:1], st, len(d))
		}
	}
}
