package dedup

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDecay compares batch.decay, from its table (decayTable) or from
// exp2, with math.Exp2(-dt/h) for half-lives from a minute to a year,
// at the table's edges and at random times, near (minutes) and far
// (days): within 2.5 units in the last place above the subnormals, plus
// what the rounding of -dt/h costs math.Exp2 itself (|x| ulp at most).
func TestDecay(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, hl := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 365 * 24 * time.Hour} {
		t.Run(hl.String(), func(t *testing.T) {
			h := float64(hl.Milliseconds())
			b := newBatch(hl.Milliseconds())
			defer b.release()
			if b.decays == nil {
				t.Fatal("no decay table for a positive half-life")
			}
			dts := []int64{-5, 0, 1, 1023, 1024, 1<<20 - 1, 1 << 20, decayTableSpan - 1, decayTableSpan, decayTableSpan + 1, 1 << 40}
			for range 100000 {
				dts = append(dts, r.Int64N(1<<20), r.Int64N(decayTableSpan), int64(r.ExpFloat64()*h))
			}
			worst := 0.0
			for _, dt := range dts {
				got, want := b.decay(dt), 1.0
				if dt > 0 {
					want = math.Exp2(-float64(dt) / h)
				}
				if want < 0x1p-1022 {
					if math.Abs(got-want) > 0x1p-1070 {
						t.Fatalf("decay(%d) = %v, want %v (subnormal)", dt, got, want)
					}
					continue
				}
				rel := math.Abs(got-want) / want
				worst = max(worst, rel)
				if rel > (2.5+float64(dt)/h)*0x1p-52 {
					t.Fatalf("decay(%d) = %v, want %v (relative error %.3g)", dt, got, want, rel)
				}
			}
			t.Logf("worst relative error %.3g", worst)
		})
	}
}
