package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// carriedName is the name under which a commit of snapshot snap links a
// data file of its base snapshot named name: name with a tag of snap
// (".sNNNNNNNNNNNN") before its extension, in place of the tag an
// earlier commit gave it. DuckDB lists a table's current/prefix=XX
// folders one after the other, and a commit may move current between
// two listings: a name listed in one snapshot is so never found in
// another, and the read fails (a missing file) rather than return one
// snapshot's partition beside another's. The content is the same file
// (a hard link), and the start of the name too, which tells a file's
// kind (schedule's cold-part-…); names stay plain (isFileName) and
// within maxFileName.
func carriedName(name string, snap int64) string {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if i := strings.LastIndex(stem, carriedTag); i >= 0 {
		if num := stem[i+len(carriedTag):]; len(num) >= len(snapshotDir(0)) {
			if _, ok := snapshotNumber(num); ok {
				stem = stem[:i]
			}
		}
	}
	tag := carriedTag + snapshotDir(snap)
	if over := len(stem) + len(tag) + len(ext) - maxFileName; over > 0 {
		stem = stem[:max(len(stem)-over, 0)]
	}
	return stem + tag + ext
}

// carriedTag starts the snapshot tag of a carried file's name.
const carriedTag = ".s"

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
