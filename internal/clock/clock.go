// Package clock is the clock of the stages that run for a while (capture,
// fetch): the wall clock, or one set by --now to start at a given time and
// advance at the wall clock's pace, so that a pass can be replayed or
// simulated at another time. Every time such a stage writes, and every
// time it compares with times from its input (a lease's end, a penalty's),
// is read from it; timeouts and rates stay on real elapsed time, which
// both clocks share.
package clock

import "time"

// Clock tells a run's time. The zero Clock is the wall clock.
type Clock struct {
	set   bool
	at    time.Time // what the clock read at start
	start time.Time // the wall clock (with its monotonic reading) then
}

// Wall returns the wall clock.
func Wall() Clock { return Clock{} }

// StartingAt returns a clock that reads t now and advances at the wall
// clock's pace: t plus the real time elapsed since the call.
func StartingAt(t time.Time) Clock {
	return Clock{set: true, at: t, start: time.Now()}
}

// Now returns the clock's current time. A set clock's time is in t's
// location, and carries no monotonic reading.
func (c Clock) Now() time.Time {
	if !c.set {
		return time.Now()
	}
	return c.at.Add(time.Since(c.start))
}

// Until returns the real time left until the clock reads t (negative
// once it has).
func (c Clock) Until(t time.Time) time.Duration {
	if !c.set {
		return time.Until(t)
	}
	return t.Sub(c.Now())
}

// Deadline returns the wall-clock time at which the clock reads t, for
// what takes a wall-clock time (a context's deadline).
func (c Clock) Deadline(t time.Time) time.Time {
	if !c.set {
		return t
	}
	return time.Now().Add(c.Until(t))
}
