package bloom20

import "math/bits"

// Mod computes x % m for a fixed m > 0 without a division: by a mask
// when m is a power of two, else as Lemire, Kaser and Kurz's "Faster
// remainder by direct computation" (2019): with c = ceil(2^128 / m),
// x % m = ((c*x mod 2^128) * m) >> 128, exactly, for every 64-bit x and m
// (their Theorem 1 with F = 128 and L = 64: c*m - 2^128 < m <= 2^64).
// A 64-bit DIV takes up to about 45 cycles on Zen 2 (Agner Fog's
// instruction tables); this takes four multiplications.
type Mod struct {
	m        uint64
	cHi, cLo uint64 // c; 0 when m is a power of two
	mask     uint64 // m-1 when m is a power of two
}

// NewMod returns the Mod for m; m must not be 0.
func NewMod(m uint64) Mod {
	if m == 0 {
		panic("bloom20: modulus 0")
	}
	if m&(m-1) == 0 {
		return Mod{m: m, mask: m - 1}
	}
	// c = floor((2^128-1) / m) + 1, as m does not divide 2^128.
	hi := ^uint64(0) / m
	lo, _ := bits.Div64(^uint64(0)%m, ^uint64(0), m)
	lo, carry := bits.Add64(lo, 1, 0)
	return Mod{m: m, cHi: hi + carry, cLo: lo}
}

// Reduce returns x % m.
func (r Mod) Reduce(x uint64) uint64 {
	if r.cHi|r.cLo == 0 {
		return x & r.mask
	}
	// low = c*x mod 2^128.
	lowHi, lowLo := bits.Mul64(r.cLo, x)
	lowHi += r.cHi * x
	// (low * m) >> 128.
	p1, _ := bits.Mul64(lowLo, r.m)
	p2hi, p2lo := bits.Mul64(lowHi, r.m)
	_, carry := bits.Add64(p2lo, p1, 0)
	return p2hi + carry
}
