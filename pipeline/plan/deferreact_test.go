package plan

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestReactivatedNeverTriedStaysNew: a never-tried hash whose deferral
// (peers_penalised) a sighting pulled forward (reactivated_at after its
// last attempt) is planned with reason reactivated, first in the new pool
// (--new-share's never-tried hashes, as status counts it: kind new), not
// in the retries' pool, where it took a failed hash's slot and due_retry
// counted a hash status calls new. One deferred and not sighted since is
// planned as new, after busier new hashes.
func TestReactivatedNeverTriedStaysNew(t *testing.T) {
	now := ms(t0) + 60*day
	for _, tc := range []struct {
		name        string
		reactivated bool
		wantReason  string // "": not planned
	}{
		{"deferred, then sighted", true, schema.ReasonReactivated},
		{"deferred, not sighted since", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule.Default()
			quiet := newHash(hashAt(0x00, 1), now-3*day)
			if err := schedule.ApplyDeferral(p, &quiet, now-2*day, now-2*day+3*day); err != nil {
				t.Fatal(err)
			}
			quiet.NextRetry = now - hour // due: pulled forward, or its wait is over
			if tc.reactivated {
				quiet.LastSeen, quiet.Reactivated = now-2*hour, now-2*hour
			}
			states := []schema.State{quiet}
			// 10 busy new hashes and 10 busy failed ones, all due.
			for i := range uint64(10) {
				st := newHash(hashAt(byte(0x10+i), i), now-hour)
				st.Activity = 8
				states = append(states, st)
				f := failedHash(t, hashAt(byte(0x30+i), i), now-hour, now-hour)
				f.Activity, f.NextRetry = 8, now-minute
				states = append(states, f)
			}
			dir := makeDataset(t, states, nil)
			share := 0.5
			jobs, st := runPlan(t, dir, now, 2, func(o *Options) { o.NewShare = &share })
			if st.DueNew != 11 || st.DueRetry != 10 || len(jobs) != 2 {
				t.Fatalf("due_new %d, due_retry %d, %d jobs; want 11, 10 and 2", st.DueNew, st.DueRetry, len(jobs))
			}
			got := jobSet(jobs)[quiet.InfoHash].Reason
			if got != tc.wantReason {
				t.Errorf("the never-tried deferred hash planned with reason %q, want %q", got, tc.wantReason)
			}
			retries := 0
			for _, j := range jobs {
				if j.InfoHash[0] >= 0x30 && j.Reason == schema.ReasonRetry {
					retries++
				}
			}
			if retries != 1 {
				t.Errorf("%d failed hashes planned, want 1 (the retries' pool)", retries)
			}
		})
	}
}
