package dataset

import (
	"errors"
	"fmt"
	"io/fs"
)

// Collected reports whether err, met while reading snapshot m without a
// lock (export, status), is a file of m gone because a newer snapshot
// (newer) was committed meanwhile and its commit collected m's files
// (writers keep --keep snapshots): not damage, and a reader can start
// over on the newer snapshot. A missing file while m is still CURRENT is
// damage, and is not reported here.
func (d *Dataset) Collected(m *Manifest, err error) (newer int64, ok bool) {
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	cur, cerr := d.Current()
	if cerr != nil || cur.Snapshot <= m.Snapshot {
		return 0, false
	}
	return cur.Snapshot, true
}

// Missing returns an error (fs.ErrNotExist) naming the first file that
// Verify found missing, or nil if none was: with Collected, it tells a
// snapshot collected during the check from a damaged one.
func (v VerifyResult) Missing() error {
	for _, p := range v.Problems {
		if p.What == problemMissing {
			return fmt.Errorf("%s: %w", p.Path, fs.ErrNotExist)
		}
	}
	return nil
}

// Moved is err, or, when err is a file of the transaction's base snapshot
// gone because a newer snapshot's commit collected it (Collected: other
// writers committed --keep times while this one worked), a conflict that
// Reapply retries on the new snapshot, as if the commit had found the
// base moved.
func (tx *Tx) Moved(err error) error {
	newer, ok := tx.d.Collected(tx.base, err)
	if !ok {
		return err
	}
	return fmt.Errorf("dataset: %s: snapshot %d was collected by later commits (now %d) while in use: %w (%w)",
		tx.d.Dir, tx.base.Snapshot, newer, ErrConflict, err)
}
