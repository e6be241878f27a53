package dataset

import (
	"maps"
	"path/filepath"
	"reflect"
	"testing"
)

// TestMigrateFromV10: a format 10 dataset, a copy whose manifest names an
// ancestor and no passes of it, is read as it is and migrated by the
// first writer to the current format rewriting the state's files alone
// (format 12's repair): its id, ancestors and other files kept, no
// passes recorded (it still takes all its ancestor's
// jobs: which it held leases of when it was copied is not known). A copy
// of it made before the migration is given its id, and its ancestors'
// passes, by the migration's commit.
func TestMigrateFromV10(t *testing.T) {
	const older = "00000000000000a2"
	dir, made := madeDataset(t)
	commitLeases(t, dir, leaseOf(0xb1, made.DatasetID), leaseOf(0xa1, older))
	cur := openWriter(t, dir, OpenOptions{})
	editManifest(t, filepath.Join(dir, "manifests", manifestName(cur.Snapshot)), func(m map[string]any) {
		m["format_version"] = 10
		m["ancestor_ids"] = []any{older}
	})
	copied := filepath.Join(t.TempDir(), "copy")
	copyTree(t, dir, copied)

	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := r.Current()
	r.Close()
	if err != nil || before.FormatVersion != 10 || before.AncestorPasses != nil {
		t.Fatalf("a format 10 manifest read: %+v, %v", before, err)
	}
	after := openWriter(t, dir, OpenOptions{})
	if after.FormatVersion != FormatVersion || after.Snapshot != before.Snapshot+1 || after.DatasetID != before.DatasetID ||
		!reflect.DeepEqual(after.AncestorIDs, []string{older}) || after.AncestorPasses != nil {
		t.Fatalf("migrated: format %d, snapshot %d, id %s, ancestors %v, passes %v; want %d, %d, %s, [%s], none",
			after.FormatVersion, after.Snapshot, after.DatasetID, after.AncestorIDs, after.AncestorPasses, FormatVersion,
			before.Snapshot+1, before.DatasetID, older)
	}
	// Format 12 rewrites the state's files (its repair), keeping their
	// rows; the other tables keep theirs.
	if a, b := after.Table(TableState).Partitions["ab"], before.Table(TableState).Partitions["ab"]; len(a) != 1 ||
		a[0].Rows != b[0].Rows || a[0].Name == b[0].Name {
		t.Fatalf("state files migrated from 10: %+v, want a new file of %+v's rows", a, b)
	}
	if a, b := tablesJSON(t, withoutState(after)), tablesJSON(t, withoutState(before)); a != b {
		t.Fatalf("migrating from 10 changed the files:\n%s\nwas\n%s", a, b)
	}

	c := openWriter(t, copied, OpenOptions{})
	want := map[string][]string{made.DatasetID: passNames(0xb1), older: passNames(0xa1)}
	if c.FormatVersion != FormatVersion || c.DatasetID == made.DatasetID ||
		!reflect.DeepEqual(c.AncestorIDs, []string{made.DatasetID, older}) || !reflect.DeepEqual(c.AncestorPasses, want) {
		t.Fatalf("a copy migrated: format %d, id %s, ancestors %v, passes %v; want %d, a new id, [%s %s], %v",
			c.FormatVersion, c.DatasetID, c.AncestorIDs, c.AncestorPasses, FormatVersion, made.DatasetID, older, want)
	}
}

// withoutState is m without its state table.
func withoutState(m *Manifest) *Manifest {
	c := *m
	c.Tables = maps.Clone(m.Tables)
	delete(c.Tables, TableState)
	return &c
}
