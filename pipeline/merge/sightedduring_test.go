package merge

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestSightingDuringLeaseReactivates: a dormant hash is planned, and while
// its job is out a capture sights it and dedup folds the sighting in (dedup
// runs beside fetch: capture -o - | dedup -). The sighting is not applied
// then: the hash is due, so nothing can be pulled closer. When merge then
// applies the job's failure, made before that sighting, the fresh sighting
// must still pull the new next_retry closer, as dedup would had it come
// after the merge (and as merge --from does for a later last_seen); a
// sighting before the attempt must not. Within min_interval of the last
// reactivation, only an announce_peer sighting (last_source) pulls, once
// announce_min_interval has passed.
func TestSightingDuringLeaseReactivates(t *testing.T) {
	p := schedule.Default()
	tests := []struct {
		name     string
		seen     int64 // last_seen, as dedup left it while the job was out
		attempt  int64
		react    int64  // reactivated_at before the job (0: never)
		src      string // the sighting's source ("": get_peers)
		wantPull bool
	}{
		{name: "sighted after the attempt", seen: t0 + 30*minute, attempt: t0 + minute, wantPull: true},
		{name: "sighted before the attempt", seen: t0 + 30*minute, attempt: t0 + 40*minute, wantPull: false},
		{name: "reactivated 2d before, announced after the attempt", seen: t0 + 30*minute, attempt: t0 + minute,
			react: t0 - 2*day, src: schema.SourceAnnouncePeer, wantPull: true},
		{name: "reactivated 2d before, looked up after the attempt", seen: t0 + 30*minute, attempt: t0 + minute,
			react: t0 - 2*day, wantPull: false},
		{name: "reactivated 6h before, announced after the attempt", seen: t0 + 30*minute, attempt: t0 + minute,
			react: t0 - 6*hour, src: schema.SourceAnnouncePeer, wantPull: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hashAt(0x42, 1)
			st := newHash(h, t0-60*day)
			st.LastSeen, st.LastSource, st.Reactivated = tt.seen, schema.SourceGetPeers, tt.react
			if tt.src != "" {
				st.LastSource = tt.src
			}
			st.MetadataStatus, st.LastFailure = schema.StatusFailed, schema.OutcomeNoPeers
			st.Attempts, st.BackoffStep = 5, 5
			st.LastAttempt, st.NextRetry = t0-30*day, t0 // due now, after a 30d wait
			dir := makeDataset(t, []schema.State{st})
			jobs := planJobs(t, dir, t0, 10)
			if len(jobs) != 1 {
				t.Fatalf("planned %d jobs, want 1", len(jobs))
			}
			ms := runMerge(t, dir, t0+50*minute, writeResults(t, []schema.Result{failure(jobs[0], schema.OutcomeNoPeers, tt.attempt)}))
			if want := map[bool]int64{true: 1}[tt.wantPull]; ms.Applied != 1 || ms.Reactivated != want {
				t.Errorf("failures_applied %d, failures_reactivated %d; want 1, %d", ms.Applied, ms.Reactivated, want)
			}
			got := stateOf(t, dir)[h]
			pulledBy := tt.seen + int64(time.Duration(p.Reactivation.Delay+p.Reactivation.Spread)/time.Millisecond)
			pulled := got.NextRetry <= pulledBy
			if pulled != tt.wantPull || (tt.wantPull && got.Reactivated != tt.seen) || (!tt.wantPull && got.Reactivated != tt.react) {
				t.Errorf("next_retry %v (%v after the attempt), reactivated_at %d; want pulled to the sighting at %v: %v",
					tm(got.NextRetry), time.Duration(got.NextRetry-tt.attempt)*time.Millisecond, got.Reactivated, tm(tt.seen), tt.wantPull)
			}
			if got.Attempts != 6 || got.LastAttempt != tt.attempt || got.LastFailure != schema.OutcomeNoPeers {
				t.Errorf("attempts %d, last_attempt %v, last_failure %s: the failure is not applied", got.Attempts, tm(got.LastAttempt), got.LastFailure)
			}
		})
	}
}
