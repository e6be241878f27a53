package dedup

import "math"

// exp2 is 2^x for x <= 0, within two units in the last place of
// math.Exp2, in a third of its time: every repeated observation decays an
// activity, and math.Exp2 was 8% of a 10M-observation dedup's CPU time.
//
// x = q + j/64 + r/64 with q and j integers and r in [0, 1): 2^(j/64)
// comes from a table, 2^(r/64) = e^y with y = r·ln2/64 < 0.0109 from its
// Taylor series up to y⁶ (the next term is below 4e-18), and 2^q is
// put into the exponent bits.
func exp2(x float64) float64 {
	if !(x > -1000) || x > 0 { // far below (or NaN), or not a decay
		return math.Exp2(x)
	}
	s := x * 64
	n := math.Floor(s)
	r := s - n
	k := int64(n)
	q, j := k>>6, k&63
	y := r * (math.Ln2 / 64)
	p := 1 + y*(1+y*(1.0/2+y*(1.0/6+y*(1.0/24+y*(1.0/120+y*(1.0/720))))))
	v := exp2Table[j] * p
	if q < -1022 {
		return math.Ldexp(v, int(q))
	}
	return v * math.Float64frombits(uint64(1023+q)<<52)
}

// exp2Table holds 2^(j/64) for j in [0, 64).
var exp2Table = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// decayTable gives 2^(-dt/h) for a half-life of h ms and 0 <= dt <
// 2^30 ms (12 days) as the product of three entries, one per 10 bits of
// dt: two multiplications instead of a division and exp2's polynomial.
// Every repeated observation decays an activity: exp2 and its division
// were 6% of the CPU of a 10M first import. Each entry, 2^(-n/h) for n =
// k·2^s, is 2^-(n/h's integer part) times 2^(-(n mod h)/h), so the
// rounding of n/h does not grow with it: the product is within 2.5
// units in the last place of 2^(-dt/h) (above the subnormals).
type decayTable struct {
	hi, mid, lo [1 << 10]float64 // dt>>20, dt>>10&1023, dt&1023
}

// decayTableSpan bounds the dt a decayTable covers.
const decayTableSpan = 1 << 30

// newDecayTable returns the table of half-life h ms, or nil when h is
// not positive (decay then calls exp2, whatever it makes of it).
func newDecayTable(h int64) *decayTable {
	if h <= 0 {
		return nil
	}
	entry := func(n int64) float64 {
		return math.Ldexp(math.Exp2(-float64(n%h)/float64(h)), -int(min(n/h, 1<<20)))
	}
	t := &decayTable{}
	for k := range int64(len(t.lo)) {
		t.hi[k], t.mid[k], t.lo[k] = entry(k<<20), entry(k<<10), entry(k)
	}
	return t
}

// at is 2^(-dt/h), for 0 <= dt < decayTableSpan.
func (t *decayTable) at(dt int64) float64 {
	return t.hi[dt>>20&1023] * t.mid[dt>>10&1023] * t.lo[dt&1023]
}
