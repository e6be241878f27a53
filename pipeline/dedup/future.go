package dedup

import (
	"log/slog"
	"math"
	"time"
)

// FutureSkew is how far past the run's clock (--now, or the wall clock) an
// observation may be dated and still be read as it is: clocks of capture
// hosts drift a little. An observation dated later than that is read as
// dated at the run's clock, counted (Stats.FutureClamped) and warned about
// once per input. Nothing is lost (the sighting still counts, with its
// hash, type and source) and a re-run of the same input with the same
// --now gives the same state; a time in the future, kept, would hold the
// hash's last_seen there: a later real sighting would not count as fresh
// (no reactivation), and activity and archiving would be reckoned from it.
const FutureSkew = 5 * time.Minute

// future bounds the observation times a batch takes in. The read paths
// compare each time with latest (one compare a row, where the times are
// checked anyway) and call over for the rare one past it.
type future struct {
	now, latest int64 // the run's clock, and the latest time read as is (ms)
	n           int64 // observations clamped in the batch
	inN, inMax  int64 // ... in the input being read, and the latest of their times
}

// noFuture is a bound that clamps nothing (a batch made without a clock).
var noFuture = future{latest: math.MaxInt64}

// setClock makes the batch read times past now+FutureSkew as now.
func (f *future) setClock(now int64) {
	*f = future{now: now, latest: now + FutureSkew.Milliseconds()}
}

// over counts at, a time past f.latest, and returns the time to read it as.
func (f *future) over(at int64) int64 {
	f.n++
	f.inN++
	f.inMax = max(f.inMax, at)
	return f.now
}

// futureNote is what one input had past the bound, for the warning.
type futureNote struct {
	input     string
	n, latest int64
}

// endInput closes the count of the input just read (named name), keeping
// a note for the warning if it had times past the bound.
func (b *batch) endInput(name string) {
	if b.fut.inN > 0 {
		b.futNotes = append(b.futNotes, futureNote{name, b.fut.inN, b.fut.inMax})
	}
	b.fut.inN, b.fut.inMax = 0, 0
}

// warnFuture warns, once per input of the committed batch, about the
// observations read as dated at the run's clock.
func (b *batch) warnFuture() {
	for _, w := range b.futNotes {
		slog.Warn("dedup: observations dated after the run's clock were read as dated at it",
			"input", w.input, "observations", w.n, "latest", time.UnixMilli(w.latest).UTC().Format(time.RFC3339Nano),
			"clock", time.UnixMilli(b.fut.now).UTC().Format(time.RFC3339Nano), "skew_allowed", FutureSkew.String())
	}
}
