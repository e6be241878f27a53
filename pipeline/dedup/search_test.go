package dedup

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestSearchFrom checks searchFrom against sort.Search for sorted runs of
// hashes looked up in order, as applyPartition does: each search starts
// where the previous one ended.
func TestSearchFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randHash := func() schema.Hash {
		var h schema.Hash
		for i := range h {
			h[i] = byte(rng.UintN(4)) // few values: many equal prefixes
		}
		return h
	}
	for _, tc := range []struct {
		name          string
		file, lookups int
	}{
		{"empty file", 0, 5},
		{"one hash", 1, 5},
		{"dense lookups", 50, 200},
		{"sparse lookups", 5000, 40},
		{"no lookups", 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				hs := make([]schema.Hash, tc.file)
				for i := range hs {
					hs[i] = randHash()
				}
				slices.SortFunc(hs, hashCmp)
				qs := make([]schema.Hash, tc.lookups)
				for i := range qs {
					if len(hs) > 0 && i%2 == 0 {
						qs[i] = hs[rng.IntN(len(hs))] // a hash the file has
					} else {
						qs[i] = randHash()
					}
				}
				slices.SortFunc(qs, hashCmp)
				qs = slices.Compact(qs)
				from := 0
				for _, q := range qs {
					want := sort.Search(len(hs), func(k int) bool { return bytes.Compare(hs[k][:], q[:]) >= 0 })
					got := searchFrom(hs, from, &q)
					if got != want {
						t.Fatalf("searchFrom(from %d, %x) = %d, want %d", from, q, got, want)
					}
					from = got
				}
			}
		})
	}
}
