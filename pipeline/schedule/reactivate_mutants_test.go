package schedule

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestReactivateOnlyWhenPulledCloser: a dormant failed hash whose retry
// is already due no later than the sighting's target (observed + delay,
// no spread here) is not reactivated: next_retry, reactivated_at and the
// backoff step stay; one a millisecond later is pulled to the target.
func TestReactivateOnlyWhenPulledCloser(t *testing.T) {
	p := Default()
	p.Reactivation.Spread = 0
	tests := []struct {
		name       string
		pastTarget int64 // next_retry minus the target
		want       bool
	}{
		{"due at the target", 0, false},
		{"due a millisecond before the target", -1, false},
		{"due a millisecond after the target", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, last := dormant(t, p, schema.OutcomeNoPeers)
			observed := last + day
			target := observed + millis(p.Reactivation.Delay)
			st.NextRetry = target + tt.pastTarget
			step, next := st.BackoffStep, st.NextRetry
			got := Reactivate(p, &st, observed, 0)
			switch {
			case got != tt.want:
				t.Fatalf("Reactivate = %v, want %v", got, tt.want)
			case tt.want && (st.NextRetry != target || st.Reactivated != observed):
				t.Errorf("next_retry %d, reactivated_at %d; want %d, %d", st.NextRetry, st.Reactivated, target, observed)
			case !tt.want && (st.NextRetry != next || st.Reactivated != 0 || st.BackoffStep != step):
				t.Errorf("changed: next_retry %d (was %d), reactivated_at %d, step %d (was %d)",
					st.NextRetry, next, st.Reactivated, st.BackoffStep, step)
			}
		})
	}
}
