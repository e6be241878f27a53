package plan

import (
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// planPhases are where a try's planning time went, for --debug: reading
// the leases and penalties, scanning the state, picking the jobs; and
// the candidates kept per pool (new, retry, cold: at most --limit in all,
// each at most what quota can still give it: caps).
type planPhases struct {
	began      time.Time
	read, scan time.Duration
	pools      [3]int
}

// log writes what a try planned from snapshot base at debug level.
func (ph *planPhases) log(base *dataset.Manifest, st *Stats, leases int) {
	pick := time.Since(ph.began) - ph.read - ph.scan
	slog.Debug("plan-retries: planned", "snapshot", base.Snapshot, "hot_rows", st.Scanned, "cold_rows", st.ColdScanned,
		"cold_window_start", st.ColdSweepStart, "due", st.Due, "candidates_new", ph.pools[0], "candidates_retry", ph.pools[1],
		"candidates_cold", ph.pools[2], "jobs", st.Planned, "leases", leases, "peer_penalties_live", st.PenaltiesLive,
		"read_s", secs(ph.read), "scan_s", secs(ph.scan), "pick_s", secs(pick))
}

// debugCommit logs a try's commit at debug level: what it committed (no
// snapshot when nothing changed), or why it did not.
func debugCommit(m *dataset.Manifest, err error, changed bool, jobs int, took time.Duration) {
	attrs := []any{"changed", changed, "jobs", jobs, "seconds", secs(took)}
	switch {
	case err != nil:
		attrs = append(attrs, "err", err.Error())
	case m != nil:
		attrs = append(attrs, "snapshot", m.Snapshot)
	}
	slog.Debug("plan-retries: commit", attrs...)
}

// debugDeliver logs the delivery of the jobs after the commit at debug
// level.
func debugDeliver(o Options, jobs int, err error, took time.Duration) {
	attrs := []any{"output", o.Output, "jobs", jobs, "seconds", secs(took)}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	slog.Debug("plan-retries: deliver", attrs...)
}

// secs is d in seconds, to the millisecond.
func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
