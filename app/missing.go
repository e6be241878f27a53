package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/infohash/infohash/internal/exitcode"
)

// missingInput is the error for an input named by path (not "-") that
// cannot be stat'ed, as dedup, fetch and merge all word it: "CMD: PATH:
// no such file or directory" (fetch said "open PATH: ...", dedup and
// merge "stat PATH: ..."), and for a symbolic link to nothing "CMD: PATH
// is a symbolic link to T, which does not exist". It is bad input (exit
// 2), not a usage error: the run's --stats-json and --metrics-file are
// written, as they were when the stage found it. nil when path is there.
func missingInput(cmd, path string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	if msg := danglingLink(path); msg != "" {
		return exitcode.BadInput(fmt.Errorf("%s: %s", cmd, msg))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return exitcode.BadInput(fmt.Errorf("%s: %s: %w", cmd, path, err))
}
