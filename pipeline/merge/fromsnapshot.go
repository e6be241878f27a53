package merge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// testFromRead, when set (by tests), runs in each try of merge --from
// once it has read the other dataset's snapshot, before it reads that
// snapshot's files.
var testFromRead func()

// otherSnapshot returns the current snapshot of the other dataset of
// merge --from and the union's ledger id: the SHA-256 of its manifest
// (see dataset.Applied).
func otherSnapshot(od *dataset.Dataset) (*dataset.Manifest, string, error) {
	om, err := od.Current()
	if err != nil {
		return nil, "", fmt.Errorf("merge --from: %w", err)
	}
	raw, err := readManifest(filepath.Join(od.Dir, "manifests", fmt.Sprintf("%012d.json", om.Snapshot)))
	if err != nil {
		return nil, "", otherCollected(od, om, fmt.Errorf("merge --from: %w", err))
	}
	return om, unionID(raw), nil
}

// unionID is the ledger id of a union of the snapshot whose manifest is
// raw: "dataset:" and its SHA-256.
func unionID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "dataset:" + hex.EncodeToString(sum[:])
}

// otherCollected is err, or, when err is a file of om, the other
// dataset's snapshot, gone because the other's writers committed their
// --keep snapshots since (dataset.Collected), a conflict: the loop of
// tries starts over on the other's newer snapshot (up to MaxReapply
// times), as status and export do. Such a run failed with the missing
// file (exit 1).
func otherCollected(od *dataset.Dataset, om *dataset.Manifest, err error) error {
	newer, ok := od.Collected(om, err)
	if !ok {
		return err
	}
	return &collectedError{dir: od.Dir, snapshot: om.Snapshot, newer: newer, err: err}
}

// collectedError is otherCollected's conflict: the other dataset's
// snapshot being read (snapshot) was collected by its writers, whose
// current one is newer, and reading it failed with err.
type collectedError struct {
	dir             string
	snapshot, newer int64
	err             error
}

func (e *collectedError) Error() string {
	return fmt.Sprintf("merge --from: %s: snapshot %d was collected by its writers' later commits (now %d) while being read: %v (%v)",
		e.dir, e.snapshot, e.newer, dataset.ErrConflict, e.err)
}

func (e *collectedError) Unwrap() []error { return []error{dataset.ErrConflict, e.err} }

// gaveUpOnOther is err, or, when the tries gave up (the locked error
// after dataset.MaxReapply conflicts) on the other dataset's writers
// collecting the snapshot being read at the last try, an error saying so
// with the locked exit status still (see the help's EXIT STATUS), but
// not exitcode.ErrLocked: no writer held this dataset's lock, and the
// app's hint for that (wait with --lock-wait) would not help, the other's
// writers going on all the same.
func gaveUpOnOther(err error) error {
	var ce *collectedError
	if !errors.Is(err, exitcode.ErrLocked) || !errors.As(err, &ce) {
		return err
	}
	return exitcode.With(exitcode.Locked, fmt.Errorf("merge --from: %s: its writers' commits collected the snapshot being read at each of %d tries"+
		" (the last, snapshot %d; now %d): run merge --from while they pause, or give them a larger --keep"+
		" (this dataset's lock was not the matter: --lock-wait does not help)", ce.dir, dataset.MaxReapply+1, ce.snapshot, ce.newer))
}

// readManifest reads the other dataset's manifest at path, which Current
// has just read, as os.ReadFile does, but only a regular file
// (fsutil.OpenRegular, as the dataset reads its own): a FIFO put there
// since would block the read for good.
func readManifest(path string) ([]byte, error) {
	f, err := fsutil.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
