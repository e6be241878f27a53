package rowio

// CRC-32C of a concatenation from the CRC-32Cs of its parts, which
// hash/crc32 lacks: a FileSummer takes the CRC of each span of a file as
// it is read, in whatever order, and joins them into the whole file's.
//
// A CRC is the remainder of the message's polynomial over GF(2), times
// x^32, modulo the generator P. For the message A‖B, A's polynomial is
// shifted up by the 8·|B| bits of B: crc(A‖B) = crc(A)·x^(8|B|) mod P ⊕
// crc(B). The initial all-ones register and the final inversion that
// CRC-32C adds cancel out of that identity (each part's conditioning is
// in its own CRC, and shifting A's through B's bits is what feeding B
// does), so it holds for the finished values that crc32.Checksum returns.
//
// The polynomials are in the reflected form hash/crc32 uses: bit 31 is
// the coefficient of x^0, bit 0 that of x^31.

// castagnoliReversed is the CRC-32C generator P without its x^32 term,
// reflected (crc32.Castagnoli).
const castagnoliReversed = 0x82f63b78

// mulModP returns a·b mod P.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0 && a != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			a ^= m
		}
		// b·x: one degree up is one bit down; an x^32 term is reduced by P.
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow2k[k] is x^(2^k) mod P.
var xPow2k = func() (t [64]uint32) {
	t[0] = 1 << 30 // x^1
	for k := 1; k < len(t); k++ {
		t[k] = mulModP(t[k-1], t[k-1])
	}
	return t
}()

// xPowBytes returns x^(8n) mod P: the shift of a CRC over n bytes.
func xPowBytes(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k, e := 3, uint64(n); e != 0; e >>= 1 {
		if e&1 != 0 {
			p = mulModP(p, xPow2k[k])
		}
		k++
	}
	return p
}

// crc32cCombine returns the CRC-32C of A‖B from a = crc(A), b = crc(B)
// and B's length n.
func crc32cCombine(a, b uint32, n int64) uint32 {
	return mulModP(xPowBytes(n), a) ^ b
}
