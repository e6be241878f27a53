package merge

import (
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// FutureSkew is how far past the run's clock (--now, or the wall clock) a
// result's attempted_at, the at of one of its peer_failures, or an ok
// result's end (attempted_at + total_ms, its torrent's fetched_at) may be
// and still be read as it is: the clocks of fetch hosts drift a little,
// as capture's do (dedup allows the same). A later time is read as the
// run's clock, the result counted (Stats.FutureClamped) and warned about
// once per input; the result still applies. Kept, such a time would set
// the hash's last_attempt, next_retry (and a fetched torrent's
// fetched_at) and a peer's penalty from a moment that has not come, and
// make an unleased result of the meantime look stale.
const FutureSkew = 5 * time.Minute

// futureNote is what one input had past the bound, for the warning.
type futureNote struct {
	n, latest int64 // results clamped, and the latest time among them
}

// clamp reads every time of r past now+FutureSkew as now, and notes it.
func (note *futureNote) clamp(r *result, now int64) {
	bound := now + FutureSkew.Milliseconds()
	clamped := false
	if r.AttemptedAt > bound {
		note.latest = max(note.latest, r.AttemptedAt)
		r.AttemptedAt, clamped = now, true
	}
	// The end of an ok attempt is its torrent's fetched_at: past the bound,
	// it is read as the clock (total_ms as what is left to it, perhaps 0).
	// A total_ms near 2^63 wrapped fetched_at to ~292 million years BC.
	if tm := r.TotalMs; r.Outcome == schema.OutcomeOK && tm != nil && *tm > bound-r.AttemptedAt {
		note.latest = max(note.latest, r.AttemptedAt+min(*tm, math.MaxInt64-r.AttemptedAt))
		r.TotalMs, clamped = new(max(now-r.AttemptedAt, 0)), true
	}
	for k := range r.PeerFailures {
		if pf := &r.PeerFailures[k]; pf.At > bound {
			note.latest = max(note.latest, pf.At)
			pf.At, clamped = now, true
		}
	}
	if clamped {
		note.n++
	}
}

// warnFuture warns about the results of input name read as dated at the
// run's clock now.
func warnFuture(name string, note futureNote, now time.Time) {
	if note.n == 0 {
		return
	}
	slog.Warn("merge: results dated after the run's clock were read as dated at it",
		"input", name, "results", note.n, "latest", time.UnixMilli(note.latest).UTC().Format(time.RFC3339Nano),
		"clock", now.UTC().Format(time.RFC3339Nano), "skew_allowed", FutureSkew.String())
}
