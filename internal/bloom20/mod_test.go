package bloom20

import (
	"math/rand/v2"
	"testing"
)

// TestModReduce: Reduce is x % m for moduli of every kind (1, powers of
// two, odd, just either side of a power of two, the largest) and for
// remainders at their edges.
func TestModReduce(t *testing.T) {
	const max64 = ^uint64(0)
	moduli := map[string]uint64{
		"1": 1, "2": 2, "3": 3, "7": 7, "64": 64, "65": 65, "dedup's partition m": 1495497,
		"2^32-1": 1<<32 - 1, "2^32": 1 << 32, "2^32+1": 1<<32 + 1,
		"2^63-1": 1<<63 - 1, "2^63": 1 << 63, "2^63+1": 1<<63 + 1, "2^64-1": max64,
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for name, m := range moduli {
		t.Run(name, func(t *testing.T) {
			r := NewMod(m)
			xs := []uint64{0, 1, m - 1, m, m + 1, 2*m - 1, 2 * m, max64, max64 - 1, max64 - m, max64 / m * m}
			for range 10000 {
				xs = append(xs, rng.Uint64(), rng.Uint64N(4*m|1))
			}
			for _, x := range xs {
				if got, want := r.Reduce(x), x%m; got != want {
					t.Fatalf("Reduce(%d) mod %d = %d, want %d", x, m, got, want)
				}
			}
		})
	}
}

// FuzzMod: Reduce is x % m for any x and m.
func FuzzMod(f *testing.F) {
	f.Add(uint64(0), uint64(1))
	f.Add(^uint64(0), uint64(3))
	f.Add(^uint64(0), ^uint64(0))
	f.Add(uint64(1)<<63, uint64(1)<<63+1)
	f.Add(uint64(12345678901234567), uint64(1495497))
	f.Fuzz(func(t *testing.T, x, m uint64) {
		if m == 0 {
			return
		}
		if got, want := NewMod(m).Reduce(x), x%m; got != want {
			t.Fatalf("Reduce(%d) mod %d = %d, want %d", x, m, got, want)
		}
	})
}

// TestNewModZeroPanics: a modulus of 0 is refused.
func TestNewModZeroPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewMod(0) did not panic")
		}
	}()
	NewMod(0)
}
