package merge

import (
	"log/slog"
	"math"
	"time"

	"github.com/infohash/infohash/formats/dataset"
)

// What a merge run did, step by step, at debug level (--debug): one
// record per input and per phase (read, apply, commit), none per row.

// debugSkipped logs the inputs that the ledger says were applied before.
func debugSkipped(ins, pending []input) {
	left := map[string]bool{}
	for _, in := range pending {
		left[in.id] = true
	}
	for _, in := range ins {
		if !left[in.id] {
			slog.Debug("merge: input already applied", "input", in.name, "id", in.id)
		}
	}
}

// debugInput logs what was read of one input, and how long it took.
func debugInput(in input, n inputNote, took time.Duration) {
	attrs := []any{"input", in.name, "id", in.id, "spooled", in.spooled != "" || in.inbox, "rows", n.rows,
		"future_clamped", n.future.n}
	if n.cut != nil {
		attrs = append(attrs, "cut", true, "no_end_marker", n.cut.NoEnd)
	}
	attrs = append(attrs, "seconds", secs(took))
	slog.Debug("merge: read input", attrs...)
}

// debugApplied logs the apply phase: the results staged and where.
func debugApplied(st Stats, err error, took time.Duration) {
	attrs := []any{"results", st.Results, "partitions_rewritten", st.Partitions, "partitions_spliced", st.Spliced, "torrents", st.Torrents,
		"failures_applied", st.Applied, "failures_deferred", st.Deferred, "late_failures_ignored", st.LateFailures, "stale_failures_ignored", st.StaleFailures,
		"peer_penalties", st.PeerPenalties, "peer_rows", st.PeerRows, "seconds", secs(took)}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	}
	slog.Debug("merge: applied", attrs...)
}

// debugCommitted logs the commit that followed the last try's staging at
// staged (zero: nothing was staged, every input was applied before).
func debugCommitted(m *dataset.Manifest, err error, conflicts int, staged time.Time) {
	if staged.IsZero() {
		return
	}
	attrs := []any{"conflicts", conflicts, "seconds", secs(time.Since(staged))}
	switch {
	case err != nil:
		attrs = append(attrs, "err", err.Error())
	case m != nil:
		attrs = append(attrs, "snapshot", m.Snapshot)
	}
	slog.Debug("merge: commit", attrs...)
}

// secs is d in seconds, to the millisecond.
func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
