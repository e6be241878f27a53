package merge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
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
	raw, err := os.ReadFile(filepath.Join(od.Dir, "manifests", fmt.Sprintf("%012d.json", om.Snapshot)))
	if err != nil {
		return nil, "", otherCollected(od, om, fmt.Errorf("merge --from: %w", err))
	}
	sum := sha256.Sum256(raw)
	return om, "dataset:" + hex.EncodeToString(sum[:]), nil
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
	return fmt.Errorf("merge --from: %s: snapshot %d was collected by its writers' later commits (now %d) while being read: %w (%w)",
		od.Dir, om.Snapshot, newer, dataset.ErrConflict, err)
}
