package merge

import "github.com/infohash/infohash/internal/progress"

// merge reports the progress of its long phases on Options.ProgressTo
// (a bar on a terminal, else a log line every progress.Interval): the
// rows of results read ("merge: reading results"), the partitions
// rewritten ("merge: applying partitions") and, for merge --from, the
// other dataset's partitions unioned ("merge --from: unioning
// partitions").

// newProgress starts a report of work on label with total units (-1:
// unknown) on the run's ProgressTo, or returns nil (reports nothing)
// without one.
func (r *runner) newProgress(label string, total int64) *progress.Reporter {
	if r.progressTo == nil {
		return nil
	}
	return progress.New(r.progressTo, label, total)
}
