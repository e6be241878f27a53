package dataset

import (
	"context"
	"testing"
)

// TestDatasetIDMadeOnce: a new dataset draws its identity, every commit
// keeps it, and another dataset draws another.
func TestDatasetIDMadeOnce(t *testing.T) {
	d := openNew(t)
	defer d.Close()
	m0, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if !ValidDatasetID(m0.DatasetID) {
		t.Fatalf("a new dataset's id is %q", m0.DatasetID)
	}
	for range 2 {
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if m.DatasetID != m0.DatasetID {
			t.Fatalf("snapshot %d names dataset %q, snapshot 0 %q", m.Snapshot, m.DatasetID, m0.DatasetID)
		}
	}
	other := openNew(t)
	defer other.Close()
	if m, _ := other.Current(); m.DatasetID == m0.DatasetID {
		t.Fatalf("two datasets share the id %s", m.DatasetID)
	}
}

// TestMigrateFromV7DrawsID: a format 7 dataset, which names no dataset,
// is given an identity by the commit that migrates it (which rewrites
// only the state's files, for format 10's columns, keeping their rows);
// readers of it as it is see none.
func TestMigrateFromV7DrawsID(t *testing.T) {
	dir, path, name := damagedDataset(t, func(m map[string]any) {
		m["format_version"] = 7
		delete(m, "dataset_id")
		delete(m, "folder")
	})
	before, err := readManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if before.DatasetID != "" {
		t.Fatalf("format 7 manifest read with id %q", before.DatasetID)
	}
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cur, _ := d.Current()
	if cur.FormatVersion != FormatVersion || cur.Snapshot != before.Snapshot+1 || !ValidDatasetID(cur.DatasetID) ||
		cur.Folder == nil || len(cur.AncestorIDs) != 0 {
		t.Fatalf("after migrate: version %d snapshot %d id %q folder %v ancestors %v", cur.FormatVersion, cur.Snapshot,
			cur.DatasetID, cur.Folder, cur.AncestorIDs)
	}
	if got, was := cur.Table(TableState).Partitions["00"], before.Table(TableState).Partitions["00"]; len(got) != 1 || got[0].Rows != was[0].Rows {
		t.Fatalf("state files after migrating: %+v, want %s's %d rows", got, name, was[0].Rows)
	}
}
