package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/fsutil"
)

// AfterCommitError is Commit's error when the snapshot was committed
// (CURRENT names it: readers and the next writer see it) but a step
// after that commit point failed. Commit returns the new manifest with
// it: the caller counts the commit and keeps what it published, and
// reports the failure rather than "nothing committed".
type AfterCommitError struct {
	Dir      string // the dataset
	Snapshot int64  // the snapshot committed
	// What names the commit when it is not the caller's own work (a
	// migration on Open); "" otherwise.
	What string
	// Durable is false when the fsync of DIR after CURRENT's rename
	// failed: a crash of the machine may yet bring back the snapshot
	// before. Then Commit leaves old snapshots for the next commit to
	// collect, and inputs the commit applied must be kept until a later
	// run finds them in the ledger.
	Durable bool
	Err     error // what failed
}

func (e *AfterCommitError) Error() string {
	what := ""
	if e.What != "" {
		what = " (" + e.What + ")"
	}
	note := " (the dataset's readers see it; the next writer points the tables' current links at it)"
	if !e.Durable {
		note = fmt.Sprintf(" (CURRENT names it, but a crash of the machine may yet bring back snapshot %d)", e.Snapshot-1)
	}
	return fmt.Sprintf("dataset: %s: committed snapshot %d%s; then: %v%s", e.Dir, e.Snapshot, what, e.Err, note)
}

func (e *AfterCommitError) Unwrap() error { return e.Err }

// AsAfterCommit reports whether err is, or wraps, an AfterCommitError:
// the run committed a snapshot, then failed.
func AsAfterCommit(err error) (*AfterCommitError, bool) {
	var e *AfterCommitError
	ok := errors.As(err, &e)
	return e, ok
}

// syncDir is fsutil.SyncDir (a variable for tests: an fsync cannot be
// made to fail otherwise).
var syncDir = fsutil.SyncDir

// afterCommit does what follows the rename of CURRENT onto m's manifest:
// it makes the rename durable, then points the tables' current links at
// m's directories (all of them, whatever fails: a failure is rolled
// forward by the next writer's Open or commit). It returns nil or an
// *AfterCommitError.
func (d *Dataset) afterCommit(m *Manifest) error {
	e := &AfterCommitError{Dir: d.Dir, Snapshot: m.Snapshot, Durable: true}
	var errs []error
	if err := syncDir(d.Dir); err != nil {
		e.Durable = false
		var pe *fs.PathError
		if errors.As(err, &pe) { // it names d.Dir, which the message does
			err = pe.Err
		}
		errs = append(errs, fmt.Errorf("fsync of the directory after renaming CURRENT: %w", err))
	}
	if err := d.linkCurrent(m); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	e.Err = errs[0]
	if len(errs) > 1 {
		e.Err = fmt.Errorf("%w; and %w", errs[0], errs[1])
	}
	return e
}

// linkCurrent points each table's current symlink at its directory in m.
// It tries every table, and returns what failed.
func (d *Dataset) linkCurrent(m *Manifest) error {
	var errs []error
	for name, t := range m.Tables {
		if err := d.linkTable(name, t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// linkTable points the current symlink of table name at t's directory
// (a new link renamed over the old one). Errors name the link relative
// to the dataset, and the step.
func (d *Dataset) linkTable(name string, t *Table) error {
	link := filepath.Join(d.Dir, name, "current")
	target, err := filepath.Rel(filepath.Join(d.Dir, name), filepath.Join(d.Dir, t.Dir))
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	fail := func(step string, err error) error {
		var le *os.LinkError
		var pe *fs.PathError
		switch {
		case errors.As(err, &le):
			err = le.Err
		case errors.As(err, &pe):
			err = pe.Err
		}
		return fmt.Errorf("pointing %s/current at %s: %s: %w", name, target, step, err)
	}
	tmp := filepath.Join(d.Dir, name, fsutil.TempPrefix+"current")
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fail("symlink", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fail("rename", err)
	}
	if err := syncDir(filepath.Join(d.Dir, name)); err != nil {
		return fail("fsync of its directory", err)
	}
	return nil
}

// tableNames are the tables a dataset may have.
var tableNames = []string{TableState, TableTorrents, TablePeers, TableLeases, TableLedger}

// linkedDirs returns the snapshot directories (dataset-relative, as a
// manifest's Table.Dir) that the tables' current links point at. gc
// keeps them: after a failed link update a link still names an older
// snapshot's directory until the next writer rolls it forward, and
// DuckDB reads through it meanwhile.
func (d *Dataset) linkedDirs() map[string]bool {
	dirs := map[string]bool{}
	for _, name := range tableNames {
		target, err := os.Readlink(filepath.Join(d.Dir, name, "current"))
		if err != nil || filepath.IsAbs(target) {
			continue
		}
		dirs[filepath.Join(name, target)] = true
	}
	return dirs
}
