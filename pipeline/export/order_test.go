package export

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestSortByHash: rows come out in info_hash order, rows of one hash in
// the order they came (stable: a base file's row before a delta's), in
// one move each along the permutation's cycles, whatever order they come
// in.
func TestSortByHash(t *testing.T) {
	row := func(first byte, seq int64) schema.State {
		return schema.State{InfoHash: schema.Hash{first, 19: byte(seq)}, SeenCount: seq}
	}
	r := rand.New(rand.NewPCG(7, 9))
	var random []schema.State
	for i := range 1000 {
		random = append(random, row(byte(r.IntN(40)), int64(i)))
	}
	tests := []struct {
		name string
		rows []schema.State
	}{
		{"none", nil},
		{"one", []schema.State{row(5, 1)}},
		{"sorted", []schema.State{row(1, 1), row(2, 2), row(3, 3)}},
		{"two sorted files", []schema.State{row(1, 1), row(4, 2), row(9, 3), row(2, 4), row(5, 5), row(8, 6)}},
		{"reversed", []schema.State{row(9, 1), row(7, 2), row(5, 3), row(3, 4), row(1, 5)}},
		{"one swap", []schema.State{row(1, 1), row(3, 2), row(2, 3), row(4, 4)}},
		{"random", random},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Same first byte, same hash but for the last: ties are
			// broken by it, so rows of one hash need it equal.
			rows := slices.Clone(tt.rows)
			for i := range rows {
				rows[i].InfoHash[19] = 0
			}
			want := slices.Clone(rows)
			slices.SortStableFunc(want, func(a, b schema.State) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
			sortByHash(rows, []int{42})
			for i := range rows {
				if rows[i].InfoHash != want[i].InfoHash || rows[i].SeenCount != want[i].SeenCount {
					t.Fatalf("row %d: %x (seq %d), want %x (seq %d)", i, rows[i].InfoHash[:1], rows[i].SeenCount,
						want[i].InfoHash[:1], want[i].SeenCount)
				}
			}
		})
	}
}
