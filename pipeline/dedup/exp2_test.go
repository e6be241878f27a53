package dedup

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExp2 compares exp2 with math.Exp2 where decays live (a few
// half-lives, and far ones) and at the edges.
func TestExp2(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	xs := []float64{0, -0.0, -1e-300, -1.0 / 64, -1, -63.0 / 64, -1021.5, -1022, -1023, -1030, -1074, -1075, -2000,
		math.Inf(-1), 0.5, 3}
	for range 200000 {
		xs = append(xs, -r.Float64()*4, -r.Float64()*1100, -r.ExpFloat64()/100)
	}
	for _, x := range xs {
		got, want := exp2(x), math.Exp2(x)
		if want == 0 || math.IsInf(want, 0) {
			if got != want {
				t.Fatalf("exp2(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		if rel := math.Abs(got-want) / want; rel > 4.5e-16 && want > 0x1p-1022 {
			t.Fatalf("exp2(%v) = %v, want %v (relative error %.2g)", x, got, want, rel)
		}
		if want <= 0x1p-1022 && math.Abs(got-want) > 0x1p-1073 {
			t.Fatalf("exp2(%v) = %v, want %v (subnormal)", x, got, want)
		}
	}
}

func BenchmarkExp2(b *testing.B) {
	xs := make([]float64, 1024)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range xs {
		xs[i] = -r.Float64() / 20
	}
	var sink float64
	b.Run("exp2", func(b *testing.B) {
		for i := range b.N {
			sink += exp2(xs[i&1023])
		}
	})
	b.Run("math.Exp2", func(b *testing.B) {
		for i := range b.N {
			sink += math.Exp2(xs[i&1023])
		}
	})
	_ = sink
}
