package leases

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// lease is a lease of hash {b} under id.
func lease(b byte, id string, until int64) schema.Lease {
	return schema.Lease{InfoHash: schema.Hash{b}, LeaseID: id, LeaseUntil: until, Attempt: 1, Reason: schema.ReasonNew,
		PlannedAt: until - 10}
}

// commitLeases opens a new dataset, stages its lease table with stage
// and commits it; it returns the dataset and the error of stage.
func commitLeases(t *testing.T, stage func(tx *dataset.Tx) error) (*dataset.Dataset, error) {
	t.Helper()
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := stage(tx); err != nil {
		tx.Abort()
		return d, err
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
	return d, nil
}

// fileRows reads the lease table of d's current snapshot in file order,
// and checks it is one file (the commit writes an empty table's).
func fileRows(t *testing.T, d *dataset.Dataset) []schema.Lease {
	t.Helper()
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	tb := m.Table(dataset.TableLeases)
	rows, err := dataset.ReadPartition[schema.Lease](d, tb, "")
	if err != nil {
		t.Fatal(err)
	}
	if files := len(tb.Partitions[""]); files != 1 {
		t.Fatalf("%d rows in %d files, want one file", len(rows), files)
	}
	return rows
}

// TestWriteMerged: the table written is the old leases and the added ones
// merged by hash, an added lease in place of an old one of its hash; an
// added sequence out of hash order is refused.
func TestWriteMerged(t *testing.T) {
	a, b, c, d, e := lease(1, "old", 100), lease(2, "old", 100), lease(3, "old", 100), lease(4, "old", 100), lease(5, "old", 100)
	b2, d2, f2 := lease(2, "new", 200), lease(4, "new", 200), lease(6, "new", 200)
	for _, tt := range []struct {
		name       string
		old, added []schema.Lease
		want       []schema.Lease
		err        string
	}{
		{name: "none"},
		{name: "old only", old: []schema.Lease{c, a, b}, want: []schema.Lease{a, b, c}},
		{name: "added only", added: []schema.Lease{b2, d2}, want: []schema.Lease{b2, d2}},
		{name: "interleaved, replacing", old: []schema.Lease{e, a, d, b, c}, added: []schema.Lease{b2, d2, f2},
			want: []schema.Lease{a, b2, c, d2, e, f2}},
		{name: "added before and after", old: []schema.Lease{c}, added: []schema.Lease{a, e}, want: []schema.Lease{a, c, e}},
		{name: "added out of order", old: []schema.Lease{a}, added: []schema.Lease{d2, b2}, err: "not in increasing hash order"},
		{name: "added twice", added: []schema.Lease{b2, b2}, err: "not in increasing hash order"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ls := Set{}
			for _, l := range tt.old {
				ls[l.InfoHash] = l
			}
			ds, err := commitLeases(t, func(tx *dataset.Tx) error { return WriteMerged(tx, ls, slices.Values(tt.added)) })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("WriteMerged: %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fileRows(t, ds); !slices.Equal(got, tt.want) {
				t.Fatalf("rows\n got  %v\n want %v", got, tt.want)
			}
		})
	}
}
