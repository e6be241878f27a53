package leases

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestSortedDuplicatesInHashOrder: a file already in hash order that
// holds a hash twice (the older lease first or last, at the start of the
// file or at its end) is read by ReadSorted as Read reads it: one lease
// for the hash, the one planned last, and Len counts it once.
func TestSortedDuplicatesInHashOrder(t *testing.T) {
	const now = 10 * Grace
	a, b, c := lease(1, "a", now), lease(2, "b", now+5), lease(3, "c", now+9)
	older := b
	older.LeaseID, older.PlannedAt = "b-older", b.PlannedAt-1
	for _, tt := range []struct {
		name string
		file []schema.Lease
		want []schema.Lease
	}{
		{"duplicate first, older first", []schema.Lease{older, b, c}, []schema.Lease{b, c}},
		{"duplicate first, older last", []schema.Lease{b, older, c}, []schema.Lease{b, c}},
		{"duplicate last, older first", []schema.Lease{a, older, b}, []schema.Lease{a, b}},
		{"duplicate last, older last", []schema.Lease{a, b, older}, []schema.Lease{a, b}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ds, m := commitLeaseFiles(t, tt.file)
			s, err := ReadSorted(ds, m)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Collect(s.All()); !slices.Equal(got, tt.want) || s.Len() != len(tt.want) {
				t.Fatalf("ReadSorted = %v (Len %d), want %v", got, s.Len(), tt.want)
			}
			if l, ok := s.Get(b.InfoHash); !ok || l != b {
				t.Fatalf("Get(b) = %v, %v; want %v", l, ok, b)
			}
		})
	}
}

// TestSortedWriteDropsOnlyThoseNamed: Sorted.Write leaves out exactly the
// hashes to drop, wherever they sit among the leases: a lease before,
// between or after them is kept.
func TestSortedWriteDropsOnlyThoseNamed(t *testing.T) {
	const now = 10 * Grace
	a, b, c := lease(1, "a", now), lease(2, "b", now+5), lease(3, "c", now+9)
	ds, m := commitLeaseFiles(t, []schema.Lease{a, b, c})
	s, err := ReadSorted(ds, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		drop []schema.Hash
		want []schema.Lease
	}{
		{"last", []schema.Hash{c.InfoHash}, []schema.Lease{a, b}},
		{"middle", []schema.Hash{b.InfoHash}, []schema.Lease{a, c}},
		{"first and last", []schema.Hash{a.InfoHash, c.InfoHash}, []schema.Lease{b}},
		{"one without a lease, after all", []schema.Hash{{9}}, []schema.Lease{a, b, c}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := commitLeases(t, func(tx *dataset.Tx) error { return s.Write(tx, tt.drop, now) })
			if err != nil {
				t.Fatal(err)
			}
			if got := fileRows(t, out); !slices.Equal(got, tt.want) {
				t.Fatalf("rows\n got  %v\n want %v", got, tt.want)
			}
		})
	}
}
