package schedule

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestProvenBadWaitsItsStepWhenLonger: a hash proven bad (bad_metadata at
// bad_metadata.sources) that fails again waits the longer of its long
// delay and its schedule's step: a swarm failure whose step is past the
// long delay waits the step, not the long delay; a too_large from a known
// source moves along backoff.too_large alone, even when that is shorter
// than the long delay (the package documentation: backoff.too_large after
// too_large).
func TestProvenBadWaitsItsStepWhenLonger(t *testing.T) {
	custom := Default()
	custom.Backoff = map[string][]Duration{}
	for c, s := range Default().Backoff {
		custom.Backoff[c] = s
	}
	custom.Backoff[schema.OutcomeTooLarge] = []Duration{Duration(time.Hour), Duration(2 * time.Hour)}
	tests := []struct {
		name  string
		p     Policy
		last  string
		step  int32
		class string
		want  time.Duration // un-jittered
	}{
		{"no_peers, step past the long delay", Default(), schema.OutcomeHashMismatch, 5, schema.OutcomeNoPeers, 30 * Day},
		{"no_peers, step short of the long delay", Default(), schema.OutcomeHashMismatch, 0, schema.OutcomeNoPeers, 7 * Day},
		{"too_large from a known source, short too_large schedule", custom, schema.OutcomeTooLarge, 1,
			schema.OutcomeTooLarge, 2 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(7)
			st.MetadataStatus, st.LastFailure, st.LastAttempt = schema.StatusFailed, tt.last, t0
			st.BackoffStep, st.BadMetadata, st.Attempts = tt.step, tt.p.BadMetadata.Sources, 3
			at := t0 + int64(40*Day/time.Millisecond)
			if err := ApplyFailure(tt.p, &st, tt.class, at, false); err != nil {
				t.Fatal(err)
			}
			inBand(t, tt.name, st.NextRetry-at, tt.want, tt.p.Jitter)
		})
	}
}

// TestApplyFailureSetsLastFailureAt: a counted failure sets last_failure and
// last_failure_at to its class and time; a local error sets them only on
// a hash that has no counted failure to keep.
func TestApplyFailureSetsLastFailureAt(t *testing.T) {
	p := Default()
	const hour = int64(time.Hour / time.Millisecond)
	tests := []struct {
		name      string
		classes   []string
		wantClass string
		wantAt    int64 // hours after t0 of the failure last_failure names
	}{
		{"one swarm failure", []string{schema.OutcomeNoPeers}, schema.OutcomeNoPeers, 0},
		{"a peer failure after it", []string{schema.OutcomeNoPeers, schema.OutcomeRejected}, schema.OutcomeRejected, 1},
		{"a local error after it", []string{schema.OutcomeNoPeers, schema.OutcomeLocalError}, schema.OutcomeNoPeers, 0},
		{"a local error first", []string{schema.OutcomeLocalError}, schema.OutcomeLocalError, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(8)
			for i, c := range tt.classes {
				if err := ApplyFailure(p, &st, c, t0+int64(i)*hour, false); err != nil {
					t.Fatal(err)
				}
			}
			if st.LastFailure != tt.wantClass || st.LastFailureAt != t0+tt.wantAt*hour {
				t.Errorf("last_failure %q at %d, want %q at %d", st.LastFailure, st.LastFailureAt, tt.wantClass, t0+tt.wantAt*hour)
			}
		})
	}
}

// TestDelayClamps: Delay reads step n of a schedule, the first for a
// step below 0 and the last for one past its end.
func TestDelayClamps(t *testing.T) {
	p := Default()
	s := DefaultSchedule()
	for _, tt := range []struct {
		n    int32
		want Duration
	}{
		{-1, s[0]}, {0, s[0]}, {1, s[1]}, {int32(len(s) - 1), s[len(s)-1]}, {int32(len(s)), s[len(s)-1]}, {1 << 30, s[len(s)-1]},
	} {
		if got := p.Delay(schema.OutcomeNoPeers, tt.n); got != tt.want {
			t.Errorf("Delay(no_peers, %d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if got := p.Delay(schema.OutcomeLocalError, 3); got != 0 {
		t.Errorf("Delay(local_error, 3) = %v, want 0", got)
	}
}

// TestDrawsVaryWithTheAttempt: the spreads drawn for one hash differ from
// attempt to attempt: the retry jitter by the attempt number, a
// deferral's by its time, and a reactivation's offset by the last
// attempt's time. (Drawn from the hash alone, each hash would keep one
// factor for ever: the same hashes always first.)
func TestDrawsVaryWithTheAttempt(t *testing.T) {
	p := Default()
	p.Reactivation.Spread = Duration(time.Hour)
	const n = 20
	tests := []struct {
		name string
		draw func(i int64) float64
	}{
		{"retry jitter by attempt", func(i int64) float64 { return JitterFactor(p, hashN(3), int32(i)) }},
		{"deferral spread by attempted_at", func(i int64) float64 {
			st := newState(3)
			if err := ApplyDeferral(p, &st, t0+i, t0+i+int64(Day/time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			return float64(st.NextRetry - (t0 + i))
		}},
		{"reactivation offset by last_attempt", func(i int64) float64 {
			st := newState(3)
			st.LastAttempt = t0 + i
			return float64(ReactivationOffset(p, &st))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[float64]bool{}
			for i := range int64(n) {
				seen[tt.draw(i+1)] = true
			}
			if len(seen) < n/2 {
				t.Errorf("%d distinct draws of %d", len(seen), n)
			}
		})
	}
}
