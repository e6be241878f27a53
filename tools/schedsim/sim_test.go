package main

import (
	"math"
	"testing"
	"time"
)

// TestNoteWake: a retry of a day or more counts once in its hour, and
// once in all over the hours of its delay's jitter window; a shorter one
// counts nowhere; a delay off every window of the policy fails the run.
func TestNoteWake(t *testing.T) {
	t0 := int64(1_700_000_000_000) / hour * hour
	tests := []struct {
		name       string
		delay      time.Duration
		counted    float64
		lo, hi     int64 // the ideal's hours, from t0
		wantFailed bool
	}{
		{"one day", 26 * time.Hour, 1, 19, 28, false},
		{"seven days", 7*24*time.Hour - time.Hour, 1, 134, 201, false},
		{"thirty days", 31 * 24 * time.Hour, 1, 576, 863, false},
		{"eight hours", 8 * time.Hour, 0, 0, -1, false},
		{"three days", 3 * 24 * time.Hour, 1, 0, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSim(config{t0: t0})
			s.noteWake(t0, t0+tt.delay.Milliseconds())
			sum, first, last := 0.0, int64(math.MaxInt64), int64(-1)
			for h, v := range s.ideal {
				first, last = min(first, h), max(last, h)
				sum += v
			}
			if len(s.ideal) > 0 && (first != tt.lo || last != tt.hi) {
				t.Errorf("ideal spread over hours %d..%d, want %d..%d", first, last, tt.lo, tt.hi)
			}
			want := tt.counted
			if tt.wantFailed || tt.hi < 0 {
				want = 0
			}
			if math.Abs(sum-want) > 1e-9 || s.wake[(tt.delay.Milliseconds())/hour] != tt.counted {
				t.Errorf("ideal sums to %v and the hour counts %v, want %v and %v", sum, s.wake[tt.delay.Milliseconds()/hour], want, tt.counted)
			}
			if failed := len(s.errs) > 0; failed != tt.wantFailed {
				t.Errorf("failed: %v (%q), want %v", failed, s.errs, tt.wantFailed)
			}
		})
	}
}

// TestNewQuota: ceil(limit/2) for the new pool, at most those due, and
// one slot left for other tiers' due hashes.
func TestNewQuota(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		dueNew float64
		others bool
		want   int
	}{
		{"half, rounded up", 5, 100, true, 3},
		{"few due", 10, 2, true, 2},
		{"limit one, others due", 1, 5, true, 1},
		{"limit two, others due", 2, 5, true, 1},
		{"none due", 10, 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newQuota(tt.limit, tt.dueNew, tt.others); got != tt.want {
				t.Errorf("newQuota(%d, %v, %v) = %d, want %d", tt.limit, tt.dueNew, tt.others, got, tt.want)
			}
		})
	}
}
