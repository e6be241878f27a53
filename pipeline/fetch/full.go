package fetch

import (
	"fmt"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
)

// releaseRefused handles the rows a full output refused (rowio.Reserve):
// an attempt's result is replaced by a released row for its lease, as a
// job left at a stop gets, so that the job is planned again rather than
// waiting for lease_until; those rows are written while they fit. A
// released row refused is not tried again: its lease expires. A refused
// attempt's job counts as unfinished, not attempted (see Stats), whether
// or not its released row fits.
func (f *Fetcher) releaseRefused(out resultSink, refused []schema.Result, full error) {
	var rows []schema.Result
	for _, r := range refused {
		if r.Outcome == schema.OutcomeReleased {
			continue
		}
		f.stats.unattempt(r)
		if r.LeaseID == "" {
			continue
		}
		rows = append(rows, schema.Result{
			InfoHash: r.InfoHash, HashType: r.HashType, Attempt: r.Attempt, LeaseID: r.LeaseID,
			AttemptedAt: schema.Millis(f.opts.Clock.Now()), Outcome: schema.OutcomeReleased,
			Detail: schema.EscapeInvalidUTF8("result not kept: " + full.Error()), PeerFailures: []schema.PeerFailure{},
		})
	}
	if len(rows) > 0 {
		_ = out.Write(rows) // the rows taken count; the rest wait for lease_until
	}
	if f.opts.Logger != nil && len(refused) > 0 {
		f.opts.Logger.Warn("fetch: the output is full: rows refused; their jobs' leases released where a row fits, else left to expire",
			"refused", len(refused), "results_released", len(rows))
	}
}

// closeFull completes the output of a run its full disk stopped
// (rowio.ErrOutputFull): what was written fits in the space reserved. It
// ends the run partial (exit 3), one line saying so, unless the file
// cannot be completed or published after all: then nothing is kept, and
// no lease was released (keptReleased), as for any output not kept.
func closeFull(out *rowio.Writer[schema.Result], opts Options, st Stats, full error) (Stats, error) {
	if err := out.Close(); err != nil {
		return keptReleased(st, opts), fmt.Errorf("fetch: %w", err)
	}
	return st, exitcode.With(exitcode.Partial, fmt.Errorf("fetch: stopped early, %w; %s kept in %s; %s",
		full, plural.Count(out.Rows(), "row", "rows"), out.Name(), st.stoppedShort()))
}
