package merge

import (
	"os"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestUnionBackCountsOnce: a dataset whose rows no ledger entry accounts
// for (stategen's, or one made by hand: its history is unrecorded) shares
// no input with any other, so its first union into another adds up the
// counts; but once that other's ledger records the union (the other
// dataset's manifest, by checksum), a union back into it ("merge A into
// B, then B's result into A") or of it again after it moved on must keep
// the larger counts, not add its sightings a second time. They were added
// again: seen_count 8 for a hash seen 3 + 2 times.
func TestUnionBackCountsOnce(t *testing.T) {
	both, onlyS, onlyX, later := hashAt(0x31, 1), hashAt(0x32, 1), hashAt(0x33, 1), hashAt(0x34, 1)
	seen := func(h schema.Hash, n int64) schema.State {
		st := newHash(h, t0)
		st.SeenCount, st.Activity = n, float64(n)
		return st
	}
	tests := []struct {
		name string
		// run unions between s (unrecorded history) and x (one recorded
		// input), returning the dataset to check.
		run  func(t *testing.T, s, x string) string
		want map[schema.Hash]int64
	}{
		{"s into x: added", func(t *testing.T, s, x string) string {
			runFromT(t, x, s, t0+day)
			return x
		}, map[schema.Hash]int64{both: 5, onlyS: 1, onlyX: 1}},
		{"s into x, then x back into s", func(t *testing.T, s, x string) string {
			runFromT(t, x, s, t0+day)
			runFromT(t, s, x, t0+day)
			return s
		}, map[schema.Hash]int64{both: 5, onlyS: 1, onlyX: 1}},
		{"s into x, then x back into a copy of s", func(t *testing.T, s, x string) string {
			runFromT(t, x, s, t0+day)
			c := t.TempDir() + "/copy" // as cp -a makes it: its union is its first commit
			if err := os.CopyFS(c, os.DirFS(s)); err != nil {
				t.Fatal(err)
			}
			runFromT(t, c, x, t0+day)
			return c
		}, map[schema.Hash]int64{both: 5, onlyS: 1, onlyX: 1}},
		{"s into x, s moves on, s into x again", func(t *testing.T, s, x string) string {
			runFromT(t, x, s, t0+day)
			datasettest.CommitState(t, s, seen(later, 1), 3)
			runFromT(t, x, s, t0+day)
			return x
		}, map[schema.Hash]int64{both: 5, onlyS: 1, onlyX: 1, later: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := makeDataset(t, []schema.State{seen(both, 3), seen(onlyS, 1)})
			x := makeDataset(t, []schema.State{seen(both, 2), seen(onlyX, 1)})
			addTables(t, x, nil, nil, nil, []string{"xxh3:x-input"})
			got := stateOf(t, tt.run(t, s, x))
			if len(got) != len(tt.want) {
				t.Fatalf("%d hashes, want %d", len(got), len(tt.want))
			}
			for h, n := range tt.want {
				if got[h].SeenCount != n || got[h].Activity != float64(n) {
					t.Errorf("%x: seen_count %d, activity %g; want %d", h[:1], got[h].SeenCount, got[h].Activity, n)
				}
			}
		})
	}
}
