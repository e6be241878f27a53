package app

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"

	"github.com/infohash/infohash/formats/dataset"
)

// newData is the --data folder of a writer that may create a dataset
// there. A run that found no folder, made one, and then committed nothing
// (bad input, an error, an interrupt) removes it again: a mistyped or bad
// input must leave no dataset behind.
type newData struct {
	cmd, dir string
	missing  bool // dir did not exist when the run started
}

// noteData looks at dir before a writer runs: call it before anything may
// create dir.
func noteData(cmd, dir string) newData {
	_, err := os.Lstat(dir)
	return newData{cmd: cmd, dir: dir, missing: errors.Is(err, fs.ErrNotExist)}
}

// undo removes the dataset the run created in a missing dir, since it
// committed nothing, unless it holds something worth keeping (an input
// read from a stream: see dataset.RemoveUnused), which a log line names.
func (n newData) undo() {
	if !n.missing {
		return
	}
	kept, err := dataset.RemoveUnused(n.dir)
	switch {
	case err != nil:
		slog.Warn(n.cmd+": could not remove the new dataset it committed nothing to", "dir", n.dir, "err", err)
	case kept != "":
		slog.Info(n.cmd+": kept the new dataset although nothing was committed to it", "dir", n.dir, "why", kept)
	default:
		slog.Debug(n.cmd+": removed the new dataset it committed nothing to", "dir", n.dir)
	}
}
