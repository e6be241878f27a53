package schedule

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// lookedUpAndFailed returns a dormant no_peers hash that a sighting (a
// get_peers: someone looking, no peer) reactivated at react, then retried
// an hour later and failed again: back on its 30-day step, with
// reactivated_at react.
func lookedUpAndFailed(t *testing.T, p Policy) (schema.State, int64) {
	t.Helper()
	st, last := dormant(t, p, schema.OutcomeNoPeers)
	react := last + 2*day
	if !Reactivate(p, &st, react, 0) || st.Reactivated != react {
		t.Fatal("the lookup did not reactivate the dormant hash")
	}
	if err := ApplyFailure(p, &st, schema.OutcomeNoPeers, react+hour, false); err != nil {
		t.Fatal(err)
	}
	if st.Reactivated != react || st.NextRetry-st.LastAttempt < 20*day {
		t.Fatalf("after the failed retry: reactivated_at %d, next_retry last_attempt+%dd", st.Reactivated-react,
			(st.NextRetry-st.LastAttempt)/day)
	}
	return st, react
}

// TestReactivateWeighsAnnounces: an announce_peer (a peer says it holds
// the torrent now) reactivates a hash reactivated announce_min_interval
// (12h) or more ago, where any other sighting waits min_interval (7d);
// the rule's other guards hold for announces as for any sighting.
func TestReactivateWeighsAnnounces(t *testing.T) {
	const none = -1 << 62 // no announce
	tests := []struct {
		name      string
		policy    func(p *Policy)
		edit      func(p Policy, st *schema.State, react int64)
		observed  int64 // newest sighting, relative to the lookup's reactivation
		announced int64 // newest announce, relative to it (none: 0 passed)
		want      bool
		wantAt    int64 // reactivated_at, relative to it
	}{
		{name: "announce two days later", observed: 2 * day, announced: 2 * day, want: true, wantAt: 2 * day},
		{name: "get_peers two days later", observed: 2 * day, announced: none},
		{name: "announce 11h later (within announce_min_interval)", observed: 11 * hour, announced: 11 * hour},
		{name: "announce 12h later", observed: 12 * hour, announced: 12 * hour, want: true, wantAt: 12 * hour},
		{name: "announce, then a get_peers", observed: 3 * day, announced: 2 * day, want: true, wantAt: 2 * day},
		{name: "get_peers past min_interval after an announce", observed: 8 * day, announced: 2 * day, want: true,
			wantAt: 8 * day},
		{name: "announce_min_interval as long as min_interval", policy: func(p *Policy) {
			p.Reactivation.AnnounceMinInterval = p.Reactivation.MinInterval
		}, observed: 2 * day, announced: 2 * day},
		{name: "announce before the last attempt", edit: func(p Policy, st *schema.State, react int64) {
			if err := ApplyFailure(p, st, schema.OutcomeNoPeers, react+3*day, false); err != nil {
				t.Fatal(err)
			}
		}, observed: 4 * day, announced: 2 * day},
		{name: "announce at the last attempt", edit: func(p Policy, st *schema.State, react int64) {
			if err := ApplyFailure(p, st, schema.OutcomeNoPeers, react+2*day, false); err != nil {
				t.Fatal(err)
			}
		}, observed: 2 * day, announced: 2 * day},
		{name: "proven bad", edit: func(p Policy, st *schema.State, _ int64) { st.BadMetadata = p.BadMetadata.Sources },
			observed: 2 * day, announced: 2 * day},
		{name: "early in its schedule", edit: func(p Policy, st *schema.State, _ int64) { st.NextRetry = st.LastAttempt + hour },
			observed: 2 * day, announced: 2 * day},
		{name: "leased: lease kept", edit: func(p Policy, st *schema.State, react int64) {
			st.LeaseID, st.LeaseUntil = "L", react+3*day
		}, observed: 2 * day, announced: 2 * day, want: true, wantAt: 2 * day},
		{name: "cold: made hot and pulled", edit: func(p Policy, st *schema.State, _ int64) { st.Tier = schema.TierCold },
			observed: 2 * day, announced: 2 * day, want: true, wantAt: 2 * day},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Default()
			if tt.policy != nil {
				tt.policy(&p)
			}
			st, react := lookedUpAndFailed(t, p)
			if tt.edit != nil {
				tt.edit(p, &st, react)
			}
			announced := int64(0)
			if tt.announced != none {
				announced = react + tt.announced
			}
			before := st
			got := Reactivate(p, &st, react+tt.observed, announced)
			if got != tt.want {
				t.Fatalf("Reactivate = %v, want %v", got, tt.want)
			}
			if !got {
				if !sameSchedule(st, before) {
					t.Errorf("Reactivate returned false but changed the state")
				}
				return
			}
			at := react + tt.wantAt
			if st.Reactivated != at || st.Tier != schema.TierHot || Reason(&st) != schema.ReasonReactivated {
				t.Errorf("reactivated_at react+%dms, tier %s, reason %s; want react+%dms, hot, reactivated",
					st.Reactivated-react, st.Tier, Reason(&st), tt.wantAt)
			}
			if off := st.NextRetry - at; off < 0 || off >= millis(p.Reactivation.Spread) {
				t.Errorf("next_retry at reactivated_at%+dms, want within the spread after it", off)
			}
			if st.LeaseID != before.LeaseID || st.LeaseUntil != before.LeaseUntil || st.BackoffStep != before.BackoffStep {
				t.Errorf("lease or step changed")
			}
			// No attempt since: a later announce changes nothing more.
			again := st
			if Reactivate(p, &again, react+tt.observed+day, react+tt.observed+day) || !sameSchedule(again, st) {
				t.Errorf("a later announce with no attempt in between changed the state again")
			}
		})
	}
}

// TestAnnounceIntervalRunsFromTheAnnounce: a hash an announce reactivated
// and that failed again waits announce_min_interval from that announce,
// not from the lookup before it.
func TestAnnounceIntervalRunsFromTheAnnounce(t *testing.T) {
	p := Default()
	st, react := lookedUpAndFailed(t, p)
	ann := react + 2*day
	if !Reactivate(p, &st, ann, ann) {
		t.Fatal("the announce two days later did not reactivate")
	}
	if err := ApplyFailure(p, &st, schema.OutcomeNoPeers, ann+hour, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		after int64
		want  bool
	}{
		{"11h after the announce", 11 * hour, false},
		{"12h after the announce", 12 * hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := st
			if got := Reactivate(p, &s, ann+tc.after, ann+tc.after); got != tc.want || got && s.Reactivated != ann+tc.after {
				t.Errorf("Reactivate = %v (reactivated_at ann%+dms), want %v", got, s.Reactivated-ann, tc.want)
			}
		})
	}
}

// sameSchedule reports whether a and b agree on what Reactivate may
// change.
func sameSchedule(a, b schema.State) bool {
	return a.NextRetry == b.NextRetry && a.Reactivated == b.Reactivated && a.Tier == b.Tier &&
		a.BackoffStep == b.BackoffStep && a.LeaseID == b.LeaseID && a.LeaseUntil == b.LeaseUntil
}
