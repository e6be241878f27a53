package dataset

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"syscall"
)

// FolderFormat is the first format whose manifests record the folder
// they were committed in (Manifest.Folder) and the dataset's ancestors.
const FolderFormat = 9

// MaxAncestors bounds Manifest.AncestorIDs: a lease lives at most 7 days,
// and eight copies of copies within that are more than any use makes.
const MaxAncestors = 8

// MaxAncestorPasses bounds the passes Manifest.AncestorPasses records of
// one ancestor. A pass whose jobs all came back (or were released)
// leaves no lease: those outstanding are the last few passes' and the
// jobs a killed fetch took along, kept at most 7 days past their end. A
// copy whose leases name more of one ancestor's passes records none of
// them: it takes all of that ancestor's jobs, as copies did before
// format 11, rather than refuse results of its own, older jobs.
const MaxAncestorPasses = 64

// FolderID identifies the folder DIR a dataset is in by its st_dev and
// st_ino: a `mv` within its file system keeps both; `cp -a`, rsync, a
// restore from a backup or a `mv` to another file system gives another
// inode. Only the inode tells folders apart (same): an NFS mount's
// st_dev changes with each mount and differs between clients, and a
// dataset shared so would otherwise get a new id at every writer, its
// ancestors soon pushing out ids whose leases are still out. So a btrfs
// snapshot (the same inode numbers on another st_dev) is not told from
// its original.
type FolderID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// same reports whether f and g are one folder (see FolderID).
func (f FolderID) same(g FolderID) bool { return f.Ino == g.Ino }

// FolderOf is the FolderID of dir.
func FolderOf(dir string) (FolderID, error) { return folderOf(dir) }

// folderOf is FolderOf (a variable for tests: to play a copy, a moved
// folder, without one).
var folderOf = func(dir string) (FolderID, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return FolderID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FolderID{}, fmt.Errorf("%s: no device and inode numbers", dir)
	}
	return FolderID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil // Dev, Ino: uint32 on some platforms
}

// Copied reports whether m, a manifest of d, was committed in another
// folder than d.Dir: d is a copy (or a restore) of a
// dataset, which the first writer to commit in it gives an id of its own
// (identify). False for a manifest of a format before FolderFormat, and
// when d.Dir cannot be looked at.
func (d *Dataset) Copied(m *Manifest) bool {
	if m.Folder == nil {
		return false
	}
	here, err := folderOf(d.Dir)
	return err == nil && !here.same(*m.Folder)
}

// identify records in next, the snapshot a commit is about to publish on
// base (nil: the first), the folder it is published in. A base committed
// in another folder was copied here: next gets a new DatasetID, and the
// old one becomes its newest ancestor (Manifest.AncestorIDs), whose jobs
// merge still takes, planned before the copy: those of the passes the
// base's leases name (ancestorPasses). A base of format 7 or older, which names no
// dataset, gets its first id; one of format 8, which names no folder, is
// taken to be where it was made (a copy made before format 9 cannot be
// told). It runs under the writer lock, on the base read under it: of two
// writers on a copy, one draws the id and the other, its commit
// conflicting, re-applies on that snapshot, which names this folder.
func (d *Dataset) identify(base, next *Manifest) error {
	here, err := folderOf(d.Dir)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	switch {
	case next.DatasetID == "": // a dataset of format 7 or older, migrated: its identity from now on
		next.DatasetID = NewDatasetID()
	case next.Folder != nil && !next.Folder.same(here):
		old := next.DatasetID
		next.DatasetID = NewDatasetID()
		next.AncestorIDs = append([]string{old}, next.AncestorIDs...)
		next.AncestorIDs = next.AncestorIDs[:min(len(next.AncestorIDs), MaxAncestors)]
		passes, err := d.ancestorPasses(base, next.AncestorIDs)
		if err != nil {
			return err
		}
		next.AncestorPasses = passes
		slog.Info("dataset: a copy of a dataset made in another folder: it gets an id of its own; "+
			"jobs planned before the copy still merge", "dir", d.Dir, "dataset_id", next.DatasetID, "copy_of", old)
	}
	next.Folder = &here
	return nil
}

// Descends reports whether m's dataset is id's or descends from it (a
// copy of it, or of a copy: Manifest.AncestorIDs).
func (m *Manifest) Descends(id string) bool {
	return id == m.DatasetID || slices.Contains(m.AncestorIDs, id)
}

// asIdentified is base, the current snapshot a writer's transaction
// begins on, as its commit will publish its identity: for a copy
// (Copied), a clone with the id of its own that identify draws, the old
// one its newest ancestor, and this folder; else base itself. The
// writer's work reads the id from its transaction's base (plan-retries'
// lease IDs, merge's check of the results' datasets), and its commit
// publishes that same id (identify then finds the folder its own), so no
// commit is made for the id alone: a run that commits nothing (exit 2 on
// bad input found after it opened the dataset, a dry run) leaves the copy
// as it was, for the next writer to draw an id. Of two writers on a copy,
// the one that commits first publishes its id; the other's commit
// conflicts, and its next try begins on that snapshot, which names this
// folder.
func (d *Dataset) asIdentified(base *Manifest) (*Manifest, error) {
	if !d.Copied(base) {
		return base, nil
	}
	m := base.clone()
	if err := d.identify(base, m); err != nil {
		return nil, err
	}
	return m, nil
}
