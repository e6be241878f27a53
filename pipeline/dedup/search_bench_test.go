package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// BenchmarkKnownLookup looks up a partition's sorted batch (1.7k hashes,
// 227k over 256 partitions) in one of its state files (78k hashes, a
// 20M-hash state): the confirmation step of an incremental run.
func BenchmarkKnownLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	hs := make([]schema.Hash, 78_000)
	for i := range hs {
		for j := range hs[i] {
			hs[i][j] = byte(rng.Uint32())
		}
	}
	slices.SortFunc(hs, hashCmp)
	qs := make([]schema.Hash, 1_700)
	for i := range qs {
		qs[i] = hs[rng.IntN(len(hs))]
	}
	slices.SortFunc(qs, hashCmp)
	b.Run("bisect", func(b *testing.B) {
		for b.Loop() {
			for i := range qs {
				if _, ok := slices.BinarySearchFunc(hs, qs[i], hashCmp); !ok {
					b.Fatal("lost a hash")
				}
			}
		}
	})
	b.Run("gallop", func(b *testing.B) {
		for b.Loop() {
			row := 0
			for i := range qs {
				if row = searchFrom(hs, row, &qs[i]); hs[row] != qs[i] {
					b.Fatal("lost a hash")
				}
			}
		}
	})
}
