package merge

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestSightingDuringDeferredFirstAttempt: a never-tried hash is planned,
// a capture sights it while its job is out, and the job comes back
// peers_penalised (penalties running 3 more days). merge defers it (still
// new, no attempt counted) and then applies the fresh sighting as dedup
// would after the merge: the retry is pulled to the sighting
// (reactivation.spread), counted in failures_reactivated. A sighting
// before the attempt, or a deferral shorter than dormant_after, does not.
func TestSightingDuringDeferredFirstAttempt(t *testing.T) {
	p := schedule.Default()
	tests := []struct {
		name     string
		seen     int64 // last_seen, as dedup left it while the job was out
		attempt  int64
		penalty  int64 // left at the attempt
		wantPull bool
	}{
		{name: "sighted after the attempt", seen: t0 + 30*minute, attempt: t0 + minute, penalty: 3 * day, wantPull: true},
		{name: "sighted before the attempt", seen: t0 + 30*minute, attempt: t0 + 40*minute, penalty: 3 * day},
		{name: "deferred for an hour", seen: t0 + 30*minute, attempt: t0 + minute, penalty: hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hashAt(0x42, 1)
			st := newHash(h, t0-day)
			st.LastSeen = tt.seen
			dir := makeDataset(t, []schema.State{st})
			jobs := planJobs(t, dir, t0, 10)
			if len(jobs) != 1 {
				t.Fatalf("planned %d jobs, want 1", len(jobs))
			}
			r := failure(jobs[0], schema.OutcomePeersPenalised, tt.attempt)
			r.RetryAfter = tt.attempt + tt.penalty
			ms := runMerge(t, dir, t0+50*minute, writeResults(t, []schema.Result{r}))
			if want := map[bool]int64{true: 1}[tt.wantPull]; ms.Deferred != 1 || ms.Reactivated != want {
				t.Errorf("failures_deferred %d, failures_reactivated %d; want 1, %d", ms.Deferred, ms.Reactivated, want)
			}
			got := stateOf(t, dir)[h]
			pulledBy := tt.seen + int64(time.Duration(p.Reactivation.Delay+p.Reactivation.Spread)/time.Millisecond)
			if pulled := got.NextRetry <= pulledBy; pulled != tt.wantPull || (got.Reactivated == tt.seen) != tt.wantPull {
				t.Errorf("next_retry %v (%v after the attempt), reactivated_at %d; want pulled to the sighting at %v: %v",
					tm(got.NextRetry), time.Duration(got.NextRetry-tt.attempt)*time.Millisecond, got.Reactivated, tm(tt.seen), tt.wantPull)
			}
			if got.MetadataStatus != schema.StatusNew || got.Attempts != 0 || got.LastAttempt != tt.attempt {
				t.Errorf("%s, %d attempts, last_attempt %v; want new, 0, %v", got.MetadataStatus, got.Attempts,
					tm(got.LastAttempt), tm(tt.attempt))
			}
		})
	}
}
