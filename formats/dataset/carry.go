package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// DamagedFileError is a file of the base snapshot that a commit would
// carry over unchanged, or leave in a table it does not touch, but that
// no longer has the size its manifest recorded (or is gone): the commit
// refuses rather than publish a new snapshot that names the damage.
type DamagedFileError struct {
	Path string // the base snapshot's file
	What string // e.g. "100 bytes, the manifest says 2345"
}

func (e *DamagedFileError) Error() string {
	return fmt.Sprintf("%s: %s: damaged (status --verify lists every damaged file; "+
		"restore them from a backup of the dataset, see status --help)", e.Path, e.What)
}

// carryOver hard-links src, a file of the base snapshot that the commit
// does not change, to dst in the new snapshot, after checking with one
// stat that it still has the size f records (checkSize).
func carryOver(src, dst string, f FileInfo) error {
	if err := checkSize(src, f); err != nil {
		return err
	}
	return os.Link(src, dst)
}

// checkSize checks with one stat that src, a file of the base snapshot
// that the new one names too, still has the size f records. Only the
// size is checked: reading every untouched file for its CRC-32C would
// make each commit cost as much as status --verify, so a file damaged in
// place at the same size goes on (status --verify finds it; readers fail
// on it).
func checkSize(src string, f FileInfo) error {
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return &DamagedFileError{Path: src, What: problemMissing}
	}
	if err != nil {
		return err
	}
	if st.Size() != f.Size {
		return &DamagedFileError{Path: src, What: fmt.Sprintf("%d bytes, the manifest says %d", st.Size(), f.Size)}
	}
	return nil
}

// checkUntouched checks every file of table t, which the commit leaves
// as the base snapshot had it (the new manifest names the same
// directory, so nothing is linked), as carryOver checks the files it
// links: one stat each (checkSize). dir is the dataset's folder.
func checkUntouched(dir string, t *Table) error {
	for _, key := range t.PartitionKeys() {
		for _, f := range t.Partitions[key] {
			if err := checkSize(filepath.Join(dir, t.PartitionDir(key), f.Name), f); err != nil {
				return err
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(t.Blooms)) {
		if err := checkSize(filepath.Join(dir, t.BloomPath(t.Blooms[key])), t.Blooms[key]); err != nil {
			return err
		}
	}
	return nil
}

// StageError puts stage's name ("dedup") in front of a commit error that
// a damaged carried-over file caused (DamagedFileError), as the stage's
// other errors have it; other errors are returned as they are.
func StageError(stage string, err error) error {
	if _, ok := errors.AsType[*DamagedFileError](err); ok {
		return fmt.Errorf("%s: %w", stage, err)
	}
	return err
}
