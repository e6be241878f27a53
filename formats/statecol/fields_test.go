package statecol

import (
	"math/rand/v2"
	"testing"
)

// TestCountDefined compares the word-at-a-time count with a byte loop on
// levels of every length up to 40 and every offset into them.
func TestCountDefined(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, density := range []int{0, 1, 50, 99, 100} {
		defs := make([]byte, 40)
		for i := range defs {
			if r.IntN(100) < density {
				defs[i] = 1
			}
		}
		for lo := range defs {
			for hi := lo; hi <= len(defs); hi++ {
				want := 0
				for _, d := range defs[lo:hi] {
					if d != 0 {
						want++
					}
				}
				if got := countDefined(defs[lo:hi]); got != want {
					t.Fatalf("density %d%%, defs[%d:%d]: %d defined, want %d", density, lo, hi, got, want)
				}
			}
		}
	}
}
