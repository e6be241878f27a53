package dataset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// commitLeases commits, on the dataset at dir, a leases table of one
// lease for each of ids (a hash each), replacing the one it had.
func commitLeases(t *testing.T, dir string, ids ...string) {
	t.Helper()
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]schema.Lease, len(ids))
	for i, id := range ids {
		rows[i] = schema.Lease{InfoHash: schema.Hash{byte(i >> 8), byte(i)}, LeaseID: id, LeaseUntil: 2e12, Attempt: 1,
			Reason: schema.ReasonRetry, PlannedAt: 1e12}
	}
	var files []FileInfo
	if len(rows) > 0 {
		info, err := WriteStaged(tx, TableLeases, "", rows)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, info)
	}
	tx.SetPartition(TableLeases, "", files)
	if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// leaseOf is plan-retries' lease ID (leases.ID) of pass n for dataset id.
func leaseOf(n int, id string) string { return fmt.Sprintf("L%016x-%s", n, id) }

// passNames are the passes of leaseOf(n) for each of ns.
func passNames(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("%016x", n)
	}
	return out
}

// TestCopyRecordsPasses: a copy's first commit records, for the dataset
// it was copied from, the passes of the jobs the copied leases table
// holds of it (sorted, each once; not those of older lease IDs nor of
// other datasets): merge takes those and refuses that dataset's later
// ones. No lease of it: none (an empty list, not a missing one). Over
// MaxAncestorPasses: no entry, all its jobs taken as before format 11.
func TestCopyRecordsPasses(t *testing.T) {
	many := make([]int, MaxAncestorPasses+1)
	for i := range many {
		many[i] = i + 1
	}
	for _, c := range []struct {
		name   string
		leases func(orig string) []string
		want   []string // nil: no entry
	}{
		{"leases of two passes", func(orig string) []string {
			return []string{leaseOf(0xb2, orig), leaseOf(0xb1, orig), leaseOf(0xb2, orig), "L0123456789abcdef",
				leaseOf(0xc1, "00000000000000c1")}
		}, passNames(0xb1, 0xb2)},
		{"no lease", func(string) []string { return nil }, []string{}},
		{"only another dataset's", func(string) []string { return []string{leaseOf(0xc1, "00000000000000c1")} }, []string{}},
		{"MaxAncestorPasses passes", func(orig string) []string {
			var ids []string
			for _, n := range many[:MaxAncestorPasses] {
				ids = append(ids, leaseOf(n, orig))
			}
			return ids
		}, passNames(many[:MaxAncestorPasses]...)},
		{"more passes", func(orig string) []string {
			var ids []string
			for _, n := range many {
				ids = append(ids, leaseOf(n, orig))
			}
			return ids
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, before := madeDataset(t)
			commitLeases(t, dir, c.leases(before.DatasetID)...)
			copied := filepath.Join(t.TempDir(), "copy")
			copyTree(t, dir, copied)
			m := commitOnce(t, copied, OpenOptions{})
			got, ok := m.AncestorPasses[before.DatasetID]
			if !reflect.DeepEqual(m.AncestorIDs, []string{before.DatasetID}) || ok != (c.want != nil) || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("the copy: ancestors %v, passes %v (entry %v); want [%s], %v (entry %v)", m.AncestorIDs, got, ok,
					before.DatasetID, c.want, c.want != nil)
			}
			if orig := commitOnce(t, dir, OpenOptions{}); orig.AncestorPasses != nil {
				t.Fatalf("the original records passes %v", orig.AncestorPasses)
			}
		})
	}
}

// TestCopyOfCopyPasses: a copy of a copy carries over the passes its
// source recorded of an older ancestor (taken then, at that copy: their
// leases since ended are still that copy's jobs) and records its source's
// own from the leases; an ancestor its source recorded nothing of (a copy
// made before format 11) gets the passes the leases hold of it.
func TestCopyOfCopyPasses(t *testing.T) {
	dir, orig := madeDataset(t)
	commitLeases(t, dir, leaseOf(0xb1, orig.DatasetID), leaseOf(0xb2, orig.DatasetID))
	first := filepath.Join(t.TempDir(), "copy")
	copyTree(t, dir, first)
	c1 := commitOnce(t, first, OpenOptions{})
	// b1's job came back, b2's did not; the copy planned c1.
	commitLeases(t, first, leaseOf(0xb2, orig.DatasetID), leaseOf(0xc1, c1.DatasetID))
	second := filepath.Join(t.TempDir(), "copy2")
	copyTree(t, first, second)
	m := commitOnce(t, second, OpenOptions{})
	want := map[string][]string{orig.DatasetID: passNames(0xb1, 0xb2), c1.DatasetID: passNames(0xc1)}
	if !reflect.DeepEqual(m.AncestorPasses, want) {
		t.Fatalf("a copy of the copy records %v, want %v", m.AncestorPasses, want)
	}

	// The first copy as one made before format 11: no passes recorded.
	editManifest(t, filepath.Join(first, "manifests", manifestName(openWriter(t, first, OpenOptions{}).Snapshot)),
		func(m map[string]any) { delete(m, "ancestor_passes") })
	third := filepath.Join(t.TempDir(), "copy3")
	copyTree(t, first, third)
	m = commitOnce(t, third, OpenOptions{})
	want = map[string][]string{orig.DatasetID: passNames(0xb2), c1.DatasetID: passNames(0xc1)}
	if !reflect.DeepEqual(m.AncestorPasses, want) {
		t.Fatalf("a copy of an older copy records %v, want %v", m.AncestorPasses, want)
	}
}

// TestCopyDamagedLeases: a copy whose leases file is damaged cannot tell
// its ancestor's passes: its first writer's transaction fails to begin,
// naming the file, and nothing is committed (no id drawn), as every
// writer reading that file would fail.
func TestCopyDamagedLeases(t *testing.T) {
	dir, made := madeDataset(t)
	commitLeases(t, dir, leaseOf(0xb1, made.DatasetID))
	copied := filepath.Join(t.TempDir(), "copy")
	copyTree(t, dir, copied)
	r, err := OpenReadOnly(copied)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Current()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	lt := m.Table(TableLeases)
	f := lt.Partitions[""][0]
	path := filepath.Join(copied, lt.Dir, f.Name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every copy of the lease id in lease_id's pages (the column read;
	// a page header's statistics hold one too); the size and footer stay
	// as recorded.
	id := []byte(leaseOf(0xb1, made.DatasetID))
	n := 0
	for i := bytes.Index(b, id); i >= 0 && i < len(b)-int(f.FooterSize); i = bytes.Index(b, id) {
		b[i+1] ^= 0x01
		n++
	}
	if n == 0 {
		t.Fatalf("%s holds no lease id %s before its footer", path, id)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), copied, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err == nil {
		tx.Abort()
		t.Fatal("a transaction began on a copy with a damaged leases file")
	}
	if !strings.Contains(err.Error(), "reading the copied leases for their passes") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q, want one naming %s", err, path)
	}
	if cur, err := os.ReadFile(filepath.Join(copied, "CURRENT")); err != nil || string(cur) != manifestName(m.Snapshot)+"\n" {
		t.Fatalf("CURRENT is %q (%v), want %s unchanged", cur, err, manifestName(m.Snapshot))
	}
}
