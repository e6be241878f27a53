package schedule

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestDeferredNewReactivated: a never-tried hash that merge deferred
// (peers_penalised: every peer found was penalised, perhaps for another
// hash's failure; no attempt counted, so it stays new) for at least
// reactivation.dormant_after is pulled forward by a sighting after the
// deferral, by the rule and spread a failed hash's is: reactivated_at set,
// planned as reactivated, at most once per min_interval. A shorter
// deferral, a local_error (which also leaves a hash new) and a sighting
// not after the deferral's attempt move nothing.
func TestDeferredNewReactivated(t *testing.T) {
	p := Default()
	p.Jitter = 0 // the deferral's wait is exactly its penalty's end
	dormantAfter := millis(p.Reactivation.DormantAfter)
	at := t0 + day // the deferral's attempt
	tests := []struct {
		name       string
		wait       int64 // the deferral's penalty left; 0: a local_error instead
		edit       func(st *schema.State)
		observed   int64 // relative to the attempt
		wantPulled bool
		wantHot    bool // a cold hash made hot
	}{
		{name: "deferred 3d, seen a day later", wait: 3 * day, observed: day, wantPulled: true},
		{name: "deferred 30d, seen a minute later", wait: 30 * day, observed: minute, wantPulled: true},
		{name: "deferred dormant_after, seen an hour later", wait: dormantAfter, observed: hour, wantPulled: true},
		{name: "deferred just short of dormant_after", wait: dormantAfter - minute, observed: hour},
		{name: "deferred to retry_soon", wait: minute, observed: 5 * minute},
		{name: "deferred 3d, seen before the attempt", wait: 3 * day, observed: -hour},
		{name: "deferred 3d, seen at the attempt", wait: 3 * day, observed: 0},
		{name: "local_error, seen 5 minutes later", observed: 5 * minute},
		{name: "deferred after a local_error", wait: 3 * day, observed: day, wantPulled: true,
			edit: func(st *schema.State) { st.LastFailure = schema.OutcomeLocalError }},
		{name: "deferred 3d, reactivated six days before the sighting", wait: 3 * day, observed: day,
			edit: func(st *schema.State) { st.Reactivated = at - 5*day }},
		{name: "deferred 3d, reactivated seven days before the sighting", wait: 3 * day, observed: day, wantPulled: true,
			edit: func(st *schema.State) { st.Reactivated = at - 6*day }},
		{name: "cold, deferred 3d, seen a day later", wait: 3 * day, observed: day, wantPulled: true, wantHot: true,
			edit: func(st *schema.State) { st.Tier = schema.TierCold }},
		{name: "cold, deferred to retry_soon, seen later", wait: minute, observed: day, wantHot: true,
			edit: func(st *schema.State) { st.Tier = schema.TierCold }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(7)
			if tt.wait == 0 {
				if err := ApplyFailure(p, &st, schema.OutcomeLocalError, at, false); err != nil {
					t.Fatal(err)
				}
			} else if err := ApplyDeferral(p, &st, at, at+tt.wait); err != nil {
				t.Fatal(err)
			}
			if st.MetadataStatus != schema.StatusNew || st.Attempts != 0 {
				t.Fatalf("after the attempt: %s, %d attempts; want new, 0", st.MetadataStatus, st.Attempts)
			}
			if tt.edit != nil {
				tt.edit(&st)
			}
			before := st
			seen := at + tt.observed
			got := Reactivate(p, &st, seen, 0)
			if got != (tt.wantPulled || tt.wantHot) || st.Tier != schema.TierHot {
				t.Errorf("Reactivate = %v, tier %s; want %v, hot", got, st.Tier, tt.wantPulled || tt.wantHot)
			}
			wantNext, wantAt, wantReason := before.NextRetry, before.Reactivated, schema.ReasonNew
			if tt.wantPulled {
				wantNext = seen + millis(p.Reactivation.Delay) + ReactivationOffset(p, &before)
				wantAt, wantReason = seen, schema.ReasonReactivated
			}
			if st.NextRetry != wantNext || st.Reactivated != wantAt || Reason(&st) != wantReason {
				t.Errorf("waiting %v after the attempt, seen %v after it: next_retry attempt+%v, reactivated_at %d, reason %s; "+
					"want attempt+%v, %d, %s", dur(before.NextRetry-at), dur(tt.observed), dur(st.NextRetry-at), st.Reactivated,
					Reason(&st), dur(wantNext-at), wantAt, wantReason)
			}
			if st.MetadataStatus != schema.StatusNew || st.Attempts != 0 || st.LastAttempt != at || st.BackoffStep != 0 {
				t.Errorf("%s, %d attempts, last_attempt %d, step %d; want new, 0, %d, 0",
					st.MetadataStatus, st.Attempts, st.LastAttempt, st.BackoffStep, at)
			}
			if tt.wantPulled {
				if off := st.NextRetry - seen; off < 0 || off >= millis(p.Reactivation.Spread) {
					t.Errorf("next_retry %v after the sighting, want within reactivation.spread %v", dur(off), p.Reactivation.Spread)
				}
				again := st
				if Reactivate(p, &again, seen+day, 0) || again.NextRetry != st.NextRetry || again.Reactivated != st.Reactivated {
					t.Errorf("a second sighting a day later changed the state again")
				}
			}
		})
	}
}

func dur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
