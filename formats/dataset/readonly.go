package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/infohash/infohash/internal/exitcode"
)

// OldestReadFormat is the oldest dataset format OpenReadOnly reads as it
// is. Every migration so far (migrate.go) only adds state columns, which
// the readers take as zero values where a file lacks them (as migrateState
// itself does), and moves format 3's ledger out of the manifest, which the
// ledger's readers find in either place (Manifest.Applied): a reader of an
// unmigrated dataset sees what it would see after the migration. A format
// that changes the meaning of what is there must raise this.
const OldestReadFormat = 1

// OpenReadOnly opens the dataset in dir for a command that only reads it
// (status, export, merge --from's other dataset). Unlike Open it writes
// nothing and takes no writer lock: no migration, no rolling forward of a
// half-published commit, no cleaning of staging/, not even a LOCK file.
// So it works on a read-only copy or mount, while a writer holds the lock,
// and during an upgrade without committing under an older binary's
// writer. Readers go through CURRENT, which a half-published commit has
// already moved, so they see the latest snapshot either way. An older
// format it cannot read is refused (bad input) rather than migrated.
// Begin fails on the result.
//
// Like Open, it holds the shared flock on dir (useDir) until Close, so
// that a failing first writer's clean-up (RemoveUnused) does not remove a
// new dataset while it is being read. A folder it cannot lock (one the
// user may search but not list, a file system without flock) is read
// without it: the flock guards only that clean-up.
func OpenReadOnly(dir string) (_ *Dataset, err error) {
	d := &Dataset{Dir: dir, readOnly: true}
	if use, err := useDir(dir, false); err == nil {
		d.use = use // nil: no folder there (now)
	}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if ok, err := hasCurrent(dir); err != nil {
		return nil, err
	} else if !ok {
		return nil, notDataset(dir)
	}
	m, err := d.Current()
	if err != nil {
		return nil, err
	}
	if err := readableFormat(dir, m.FormatVersion, OldestReadFormat); err != nil {
		return nil, err
	}
	return d, nil
}

// readableFormat says why a reader cannot read format version of the
// dataset in dir, whose oldest readable format is oldest (nil if it can).
func readableFormat(dir string, version, oldest int) error {
	switch {
	case version > FormatVersion:
		return exitcode.BadInput(fmt.Errorf("dataset: %s: format %d is newer than this build's %d; upgrade infohash", dir, version, FormatVersion))
	case version < oldest:
		return exitcode.BadInput(fmt.Errorf("dataset %s is format %d; run a writer (dedup or merge) once to migrate it", dir, version))
	}
	return nil
}

// errReadOnly is what Begin returns on a dataset opened with OpenReadOnly.
var errReadOnly = errors.New("opened read-only")

// ErrNoFolder is returned instead of ErrNotDataset when DIR itself does
// not exist: a mistyped --data is told apart from a folder that holds no
// dataset.
var ErrNoFolder = errors.New("the folder does not exist")

// notDataset is the bad-input error for a dir that holds no dataset:
// ErrNoFolder if dir does not exist (or a part of its path is a file),
// ErrNotDataset otherwise; naming the dataset dir lies in, if any.
func notDataset(dir string) error {
	why := ErrNotDataset
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		why = ErrNoFolder
	}
	if outer, ok := Nested(dir); ok {
		// --data DIR/state for DIR, say: name the folder meant.
		return exitcode.BadInput(fmt.Errorf("dataset: %s: %w; it lies inside the dataset %s: give that folder", dir, why, outer))
	}
	// Say which commands make a dataset: status, export, plan-retries
	// and merge (but --from) make none.
	return exitcode.BadInput(fmt.Errorf("dataset: %s: %w; %s", dir, why, makesDataset))
}

// makesDataset says, after a --data that holds no dataset, which
// commands make one.
const makesDataset = "infohash dedup --data DIR makes one (so does merge --from); no other command does"
