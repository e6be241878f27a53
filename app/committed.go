package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

// failedAfterCommit reports whether err is a stage's failure after the
// commit point of its snapshot (dataset.AfterCommitError): the run
// committed, so it ends as a committed run does (endCommitted), but
// without its "done" line.
func failedAfterCommit(err error) bool {
	_, ok := dataset.AsAfterCommit(err)
	return ok
}

// endCommitted ends the run of a stage that wrote to a dataset: it writes
// --stats-json and --metrics-file (writeStatsJSON) and returns how the
// run ends: runErr, nil or a failure after the commit point, which keeps
// exit 1 (the status that prints its message) whatever else failed. A
// report that cannot be written after a commit (committed: snapshot) says
// that the snapshot was committed: only the report is missing. stopped
// says that a run runErr calls done ends with exit 130 all the same (a
// signal in the stream grace): it then returns interruptedAfter's error.
func endCommitted(c *cli.Context, stats any, committed bool, snapshot int64, runErr error, stopped bool) error {
	return writeStatsJSON(c, stats, func(err error) error {
		switch {
		case err == nil && runErr == nil && stopped:
			return interruptedAfter(c.Command.Name, snapshot)
		case err == nil:
			return runErr
		case runErr != nil:
			return exitcode.With(exitcode.Error, fmt.Errorf("%w; and %w", runErr, err))
		case committed:
			return fmt.Errorf("%s: committed snapshot %d; then: %w (only the report is missing)", c.Command.Name, snapshot, err)
		}
		return err
	})
}
