package bloom20

import (
	"math/rand/v2"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"
)

// BenchmarkAddTest: per-key Add and Test of 20-byte keys, the library's
// and this package's, in the same run, in filters of dedup's sizes: its
// smallest (4096 keys' room, 5 KB, in L1/L2), a partition of a 20M-hash
// state (78k keys, 186 KB, in L2) and a 1M-key one (2.3 MB, past L2).
func BenchmarkAddTest(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"min", 2048}, {"78k", 78000}, {"1M", 1000000}}
	rng := rand.New(rand.NewPCG(11, 12))
	keys := make([][20]byte, 1<<16)
	for i := range keys {
		keys[i] = randKey(rng)
	}
	for _, s := range sizes {
		bf := bloom.NewWithEstimates(uint(2*s.n), 0.01)
		f := Of(bf)
		for i := range s.n {
			f.Add(&keys[i%len(keys)])
		}
		var sink bool
		b.Run(s.name+"/add/library", func(b *testing.B) {
			i := 0
			for b.Loop() {
				bf.Add(keys[i&(len(keys)-1)][:])
				i++
			}
		})
		b.Run(s.name+"/add/bloom20", func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.Add(&keys[i&(len(keys)-1)])
				i++
			}
		})
		// Absent keys: most are negatives, after one to a few bits.
		absent := make([][20]byte, len(keys))
		for i := range absent {
			absent[i] = randKey(rng)
		}
		b.Run(s.name+"/test/library", func(b *testing.B) {
			i := 0
			for b.Loop() {
				sink = bf.Test(absent[i&(len(absent)-1)][:]) != sink
				i++
			}
		})
		b.Run(s.name+"/test/bloom20", func(b *testing.B) {
			i := 0
			for b.Loop() {
				sink = f.Test(&absent[i&(len(absent)-1)]) != sink
				i++
			}
		})
		b.Run(s.name+"/testpresent/library", func(b *testing.B) {
			i := 0
			for b.Loop() {
				sink = bf.Test(keys[i&(len(keys)-1)][:]) != sink
				i++
			}
		})
		b.Run(s.name+"/testpresent/bloom20", func(b *testing.B) {
			i := 0
			for b.Loop() {
				sink = f.Test(&keys[i&(len(keys)-1)]) != sink
				i++
			}
		})
	}
}
