package plan

import (
	"errors"
	"fmt"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// ErrReaderGone is wrapped by the error (exit 141) of a run that leased
// nothing because the reader of its output, a pipe or FIFO written after
// the commit, had gone before it.
var ErrReaderGone = errors.New("the output's reader went away before the leases were committed")

// readerThere is the commit's last question (dataset.CommitOptions.Ready)
// when it leases jobs: an output written after the commit (stdout with
// -o -, a FIFO or /dev/stdout) that is a pipe or FIFO no reader holds
// open any more would take none of them, and their leases would keep the
// hashes from every planner until they end ("plan-retries -o - | fetch"
// with a fetch that exited at once). It then returns an error wrapping
// ErrReaderGone, and the commit publishes nothing. A reader that goes
// after the question is met by the first write, after the commit: its
// jobs stay leased.
func readerThere(o Options, stream *rowio.Writer[schema.Job], jobs int) error {
	if jobs == 0 {
		return nil
	}
	gone, where := false, o.Output
	switch {
	case stream != nil:
		gone = stream.ReaderGone()
	case o.Output == "-":
		gone, where = fsutil.ReaderGone(o.Stdout), "stdout"
	}
	if !gone {
		return nil
	}
	return exitcode.With(exitcode.BrokenPipe, fmt.Errorf("plan-retries: %s: %w", where, ErrReaderGone))
}

// dropJobs makes st, the counters of a run whose commit ErrReaderGone
// stopped, say what the run did: the jobs planned are Dropped, and
// nothing the commit would have done happened (no lease, no stale lease
// dropped, no unpublished file's lease dropped, the cold sweep's cursor
// unmoved, no jobs delivered) on snapshot, the one planned from. What the
// scan saw (due, under lease, ...) stays as counted, and every due hash
// is left unplanned (DueUnplanned).
func (st *Stats) dropJobs(snapshot int64) {
	st.Dropped, st.ReaderGone, st.Snapshot, st.DueUnplanned = st.Planned, true, snapshot, st.Due
	st.Planned, st.PlannedNew, st.PlannedRetry, st.PlannedReactivated, st.PlannedCold, st.Relet = 0, 0, 0, 0, 0, 0
	st.PlannedNewOverdue = 0
	st.LeasesPruned, st.UnpublishedEnded, st.AvoidExpired, st.AvoidListed = 0, 0, 0, 0
	st.ColdSweepNext, st.LeaseID, st.LeaseUntil = st.ColdSweepStart, "", time.Time{}
}
