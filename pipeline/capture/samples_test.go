package capture

import (
	"math/rand/v2"
	"testing"
)

// TestOwnSamplesDistinct: the samples capture serves to other crawlers
// (BEP 51) hold no hash twice, and num counts distinct hashes, whatever
// the ring holds (a multiple of the old stride of 7 cycled over a third
// of the hashes) and however often a hash is announced again.
func TestOwnSamplesDistinct(t *testing.T) {
	for _, tc := range []struct{ distinct, repeats int }{
		{5, 1}, {5, 5}, {20, 1}, {21, 1}, {28, 3}, {133, 1}, {256, 1}, {300, 2},
	} {
		n := &node{rng: rand.New(rand.NewPCG(1, uint64(tc.distinct)))}
		for range tc.repeats {
			for i := range tc.distinct {
				n.remember([20]byte{byte(i), byte(i >> 8), 1})
			}
		}
		wantNum := min(tc.distinct, len(n.recent))
		if got := min(n.nrecent, len(n.recent)); got != wantNum {
			t.Errorf("%d hashes announced %d times: num %d, want %d", tc.distinct, tc.repeats, got, wantNum)
		}
		for try := range 10 {
			s := n.samples(nil)
			if want := min(wantNum, 20) * 20; len(s) != want {
				t.Fatalf("%d hashes: %d sample bytes, want %d", tc.distinct, len(s), want)
			}
			seen := map[[20]byte]bool{}
			for i := 0; i < len(s); i += 20 {
				h := [20]byte(s[i : i+20])
				if seen[h] {
					t.Fatalf("%d hashes (%d times), try %d: sample %x twice", tc.distinct, tc.repeats, try, h)
				}
				seen[h] = true
			}
		}
	}
}
