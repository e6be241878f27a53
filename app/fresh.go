package app

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/pipeline/schedule"
)

// newData is the --data folder of a writer that may create a dataset
// there. A run that found no folder (or one without a dataset), made a
// dataset there, and then committed nothing (bad input, an error, an
// interrupt) removes it again: a mistyped or bad input must leave no
// dataset behind, and none of the folder's other files goes with it.
type newData struct {
	cmd, dir string
	missing  bool     // dir did not exist when the run started
	empty    bool     // dir was an empty folder when the run started
	theirs   []string // else the names in dir when the run started, if it held no dataset (no CURRENT)
}

// noteData looks at dir before a writer runs: call it before anything may
// create dir.
func noteData(cmd, dir string) newData {
	n := newData{cmd: cmd, dir: dir}
	_, err := os.Lstat(dir)
	n.missing = errors.Is(err, fs.ErrNotExist)
	if err == nil {
		if f, err := os.Open(dir); err == nil {
			names, err := f.Readdirnames(-1)
			f.Close()
			switch {
			case err != nil:
			case len(names) == 0:
				n.empty = true
			case !slices.Contains(names, "CURRENT"):
				n.theirs = names
			}
		}
	}
	return n
}

// undo removes the dataset the run created in a missing dir, or one
// without a dataset, since it committed nothing (dir stays if it was
// there, with only the entries it held), unless it
// holds something worth keeping (an input read from a stream: see
// dataset.RemoveUnused) or another run has it open (runs that started
// together on a new dir), which a log line names. The run must have
// closed its own dataset.Dataset first.
func (n newData) undo() {
	var kept string
	var err error
	switch {
	case n.missing:
		kept, err = dataset.RemoveUnused(n.dir, schedule.Default().JSON())
	case n.empty:
		kept, err = dataset.EmptyUnused(n.dir, schedule.Default().JSON())
	case n.theirs != nil:
		kept, err = dataset.ClearUnused(n.dir, schedule.Default().JSON(), n.theirs)
	default:
		return
	}
	switch {
	case err != nil:
		slog.Warn(n.cmd+": could not remove the new dataset it committed nothing to", "dir", n.dir, "err", err)
	case kept != "":
		slog.Info(n.cmd+": kept the new dataset although nothing was committed to it", "dir", n.dir, "why", kept)
	default:
		slog.Debug(n.cmd+": removed the new dataset it committed nothing to", "dir", n.dir)
	}
}
