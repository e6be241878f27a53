package dataset

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
)

// madeDataset is a dataset in a new folder with one committed state row.
func madeDataset(t *testing.T) (dir string, m *Manifest) {
	t.Helper()
	d := openNew(t)
	defer d.Close()
	return d.Dir, commitRows(t, d, "ab", []schema.State{{InfoHash: schema.Hash{0xab}, HashType: 1, SeenCount: 1,
		MetadataStatus: "new", Tier: "hot"}})
}

// copyTree copies src to dst as `cp -a` does: new inodes, same bytes.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
}

// openWriter opens dir as a writer does and returns its current manifest.
func openWriter(t *testing.T, dir string, o OpenOptions) *Manifest {
	t.Helper()
	d, err := Open(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// commitOnce opens dir as a writer, commits a transaction that changes
// nothing (re-applied on a conflict, as writers do) and returns the
// manifest it committed.
func commitOnce(t *testing.T, dir string, o OpenOptions) *Manifest {
	t.Helper()
	d, err := Open(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for {
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		m, err := tx.Commit(context.Background(), CommitOptions{LockWait: o.LockWait, Writer: "test"})
		if isConflict(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// TestCopyGetsAnIDOfItsOwn: opening a dataset as a writer commits
// nothing, a copy too (`cp -a`: another inode); the first writer's commit
// on a copy gives it a new id, the old one its ancestor, and nothing else
// (its tables as they were); a copy of the copy names both ancestors,
// newest first. The original, a `mv` of it in its file system and a
// commit in the same folder keep their id.
func TestCopyGetsAnIDOfItsOwn(t *testing.T) {
	for _, c := range []struct {
		name string
		// place puts the dataset at dir somewhere and returns where.
		place func(t *testing.T, dir string) string
		copy  bool
	}{
		{"same folder", func(t *testing.T, dir string) string { return dir }, false},
		{"mv in its file system", func(t *testing.T, dir string) string {
			moved := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			return moved
		}, false},
		{"cp -a", func(t *testing.T, dir string) string {
			copied := filepath.Join(t.TempDir(), "copy")
			copyTree(t, dir, copied)
			return copied
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, before := madeDataset(t)
			beforeBytes, err := os.ReadFile(filepath.Join(dir, "manifests", manifestName(before.Snapshot)))
			if err != nil {
				t.Fatal(err)
			}
			at := c.place(t, dir)
			opened := openWriter(t, at, OpenOptions{})
			got, err := os.ReadFile(filepath.Join(at, "manifests", manifestName(opened.Snapshot)))
			if err != nil {
				t.Fatal(err)
			}
			if opened.Snapshot != before.Snapshot || string(got) != string(beforeBytes) {
				t.Fatalf("opened at %s: snapshot %d, manifest\n%s\nwant snapshot %d unchanged:\n%s", at, opened.Snapshot,
					got, before.Snapshot, beforeBytes)
			}
			after := commitOnce(t, at, OpenOptions{})
			if !c.copy {
				if after.DatasetID != before.DatasetID || len(after.AncestorIDs) != 0 {
					t.Fatalf("committed at %s: id %s, ancestors %v; want id %s, none", at, after.DatasetID, after.AncestorIDs,
						before.DatasetID)
				}
				return
			}
			if after.Snapshot != before.Snapshot+1 || !ValidDatasetID(after.DatasetID) ||
				after.DatasetID == before.DatasetID || !reflect.DeepEqual(after.AncestorIDs, []string{before.DatasetID}) {
				t.Fatalf("copy's first commit: snapshot %d, id %s, ancestors %v; want snapshot %d, a new id, ancestors [%s]",
					after.Snapshot, after.DatasetID, after.AncestorIDs, before.Snapshot+1, before.DatasetID)
			}
			if a, b := tablesJSON(t, after), tablesJSON(t, before); a != b {
				t.Fatalf("the copy's first commit changed its tables or totals:\n%s\nwas\n%s", a, b)
			}
			if again := commitOnce(t, at, OpenOptions{}); again.DatasetID != after.DatasetID || len(again.AncestorIDs) != 1 {
				t.Fatalf("the copy's next commit: id %s, ancestors %v; want %s, one (identified once)", again.DatasetID,
					again.AncestorIDs, after.DatasetID)
			}
			if orig := commitOnce(t, dir, OpenOptions{}); orig.DatasetID != before.DatasetID || len(orig.AncestorIDs) != 0 {
				t.Fatalf("the original's commit: id %s, ancestors %v; want %s, none", orig.DatasetID, orig.AncestorIDs, before.DatasetID)
			}
			second := filepath.Join(t.TempDir(), "copy2")
			copyTree(t, at, second)
			m := commitOnce(t, second, OpenOptions{})
			if want := []string{after.DatasetID, before.DatasetID}; !reflect.DeepEqual(m.AncestorIDs, want) || !m.Descends(before.DatasetID) {
				t.Fatalf("a copy of the copy has ancestors %v, want %v", m.AncestorIDs, want)
			}
		})
	}
}

// TestAncestorsBounded: a dataset copied again and again (played by a
// folder whose inode number changes, as a restore's does) keeps its last
// MaxAncestors ids, newest first, and the passes of those alone.
func TestAncestorsBounded(t *testing.T) {
	dir, _ := madeDataset(t)
	real := folderOf
	defer func() { folderOf = real }()
	var ids []string
	for i := range MaxAncestors + 2 {
		m := commitOnce(t, dir, OpenOptions{})
		ids = append([]string{m.DatasetID}, ids...)
		folderOf = func(dir string) (FolderID, error) {
			f, err := real(dir)
			f.Ino += uint64(i + 1)
			return f, err
		}
	}
	m := commitOnce(t, dir, OpenOptions{})
	if want := ids[:MaxAncestors]; !reflect.DeepEqual(m.AncestorIDs, want) {
		t.Fatalf("ancestors %v, want the last %d ids %v", m.AncestorIDs, MaxAncestors, want)
	}
	// Each ancestor's passes (none: no lease), and none of those it lost.
	if got := slices.Sorted(maps.Keys(m.AncestorPasses)); !reflect.DeepEqual(got, slices.Sorted(slices.Values(m.AncestorIDs))) {
		t.Fatalf("passes recorded of %v, want of the ancestors %v", got, m.AncestorIDs)
	}
}

// TestCopyReadOnlyOpens: status's and a writer's opens of a copy write
// nothing (Copied tells), and writers committing on it at once draw its
// new id once: the losers of the commit race find it drawn, and commit it
// (each try works with the id its commit publishes).
func TestCopyReadOnlyOpens(t *testing.T) {
	dir, before := madeDataset(t)
	copied := filepath.Join(t.TempDir(), "copy")
	copyTree(t, dir, copied)
	tree := fsutiltest.Tree(t, copied)
	r, err := OpenReadOnly(copied)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := r.Current(); err != nil || !r.Copied(m) || m.DatasetID != before.DatasetID {
		t.Fatalf("read-only open of a copy: copied %v, id %s, err %v; want copied, id %s", err == nil && r.Copied(m), m.DatasetID, err, before.DatasetID)
	}
	r.Close()
	if got := fsutiltest.Tree(t, copied); !reflect.DeepEqual(got, tree) {
		t.Fatalf("reading a copy changed it:\n%v\nwas\n%v", got, tree)
	}
	if m := openWriter(t, copied, OpenOptions{}); m.Snapshot != before.Snapshot {
		t.Fatalf("a writer's open committed snapshot %d", m.Snapshot)
	}
	if o, err := OpenReadOnly(dir); err != nil {
		t.Fatal(err)
	} else if m, err := o.Current(); err != nil || o.Copied(m) {
		t.Fatalf("the original reads as a copy (%v)", err)
	} else {
		o.Close()
	}
	var wg sync.WaitGroup
	ids := make([]string, 4)
	for i := range ids {
		wg.Go(func() {
			d, err := Open(context.Background(), copied, OpenOptions{LockWait: time.Minute})
			if err != nil {
				t.Error(err)
				return
			}
			defer d.Close()
			for {
				tx, err := d.Begin()
				if err != nil {
					t.Error(err)
					return
				}
				id := tx.Base().DatasetID
				m, err := tx.Commit(context.Background(), CommitOptions{LockWait: time.Minute, Writer: "test"})
				if isConflict(err) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if m.DatasetID != id {
					t.Errorf("a writer worked with id %s and committed %s", id, m.DatasetID)
				}
				ids[i] = m.DatasetID
				return
			}
		})
	}
	wg.Wait()
	m := openWriter(t, copied, OpenOptions{})
	for i, id := range ids {
		if id != m.DatasetID {
			t.Fatalf("writer %d committed id %s, the dataset has %s", i, id, m.DatasetID)
		}
	}
	if m.Snapshot != before.Snapshot+int64(len(ids)) || len(m.AncestorIDs) != 1 {
		t.Fatalf("after racing writers: snapshot %d, ancestors %v; want %d, one", m.Snapshot, m.AncestorIDs, before.Snapshot+int64(len(ids)))
	}
}

// TestMigrateFromV8KeepsID: a format 8 dataset, whose manifest names no
// folder, is read as it is and migrated by the first writer: its id
// kept (a copy made before format 9 cannot be told), its folder recorded,
// its state file rewritten (for format 10's columns) with its rows.
func TestMigrateFromV8KeepsID(t *testing.T) {
	dir, path, name := damagedDataset(t, func(m map[string]any) {
		m["format_version"] = 8
		delete(m, "folder")
		delete(m, "ancestor_ids")
	})
	before, err := readManifest(path)
	if err != nil {
		t.Fatalf("a format 8 manifest: %v", err)
	}
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Copied(before) {
		t.Fatal("a format 8 dataset reads as a copy")
	}
	r.Close()
	cur := openWriter(t, dir, OpenOptions{})
	here, err := folderOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cur.FormatVersion != FormatVersion || cur.Snapshot != before.Snapshot+1 || cur.DatasetID != before.DatasetID ||
		cur.Folder == nil || *cur.Folder != here || len(cur.AncestorIDs) != 0 {
		t.Fatalf("after migrate: version %d snapshot %d id %s folder %v ancestors %v; want %d, %d, %s, %v, none",
			cur.FormatVersion, cur.Snapshot, cur.DatasetID, cur.Folder, cur.AncestorIDs, FormatVersion, before.Snapshot+1,
			before.DatasetID, here)
	}
	was := before.Table(TableState).Partitions["00"]
	if got := cur.Table(TableState).Partitions["00"]; len(got) != 1 || len(was) != 1 || was[0].Name != name || got[0].Rows != was[0].Rows {
		t.Fatalf("state files after migrating: %+v, want one of %+v's rows", got, was)
	}
}

// tablesJSON is what m says of its files and totals.
func tablesJSON(t *testing.T, m *Manifest) string {
	t.Helper()
	b, err := json.MarshalIndent(struct {
		Tables map[string]*Table
		Totals map[string]int64
	}{m.Tables, m.Totals}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRemountKeepsID: a folder whose device number changes but not its
// inode (an NFS mount remounted, or seen from another client) is the same
// dataset: its writers keep its id and add no ancestor. Comparing st_dev
// too gave it a new id at each writer, and after MaxAncestors of them its
// outstanding leases were another dataset's.
func TestRemountKeepsID(t *testing.T) {
	dir, before := madeDataset(t)
	real := folderOf
	defer func() { folderOf = real }()
	for i := range 3 {
		folderOf = func(dir string) (FolderID, error) {
			f, err := real(dir)
			f.Dev += uint64(i + 1)
			return f, err
		}
		m := commitOnce(t, dir, OpenOptions{})
		if m.DatasetID != before.DatasetID || len(m.AncestorIDs) != 0 {
			t.Fatalf("mount %d: id %s with ancestors %v, want %s without", i, m.DatasetID, m.AncestorIDs, before.DatasetID)
		}
	}
}
