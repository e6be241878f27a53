package clock

import (
	"testing"
	"time"
)

// TestClock: a clock set to a time in the past or the future reads it
// plus the real time elapsed since, and maps its times to the wall
// clock's for deadlines; the zero Clock is the wall clock.
func TestClock(t *testing.T) {
	wall := time.Now()
	tests := []struct {
		name string
		c    Clock
		at   time.Time // what the clock read when made
	}{
		{"wall", Wall(), wall},
		{"zero value", Clock{}, wall},
		{"past", StartingAt(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)), time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"future", StartingAt(wall.Add(100 * 24 * time.Hour)), wall.Add(100 * 24 * time.Hour)},
	}
	// The clocks above started between wall and built: a clock's elapsed
	// time is at least the time since built, at most the time since wall.
	built := time.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			time.Sleep(20 * time.Millisecond)
			before := time.Since(built)
			now := tt.c.Now()
			after := time.Since(wall)
			// The clock has advanced as much as the wall clock (give or
			// take the wall clock's own reading of tt.at for "wall").
			if got := now.Sub(tt.at); got < before-time.Millisecond || got > after+time.Second {
				t.Errorf("Now() = %v: %v after its start, want between %v and %v", now, got, before, after)
			}
			target := now.Add(time.Hour)
			if u := tt.c.Until(target); u <= 59*time.Minute || u > time.Hour {
				t.Errorf("Until(now + 1h) = %v, want just under 1h", u)
			}
			if d := time.Until(tt.c.Deadline(target)); d <= 59*time.Minute || d > time.Hour {
				t.Errorf("Deadline(now + 1h) is %v from the wall clock's now, want just under 1h", d)
			}
		})
	}
}
