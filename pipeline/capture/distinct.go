package capture

import (
	"hash/maphash"
	"math"
	"math/bits"
)

// distinct_hashes counts the distinct hashes of the observations written.
// An exact set of them all grew by about 80 bytes a hash (194 MB of RSS at
// 2 million, where the rest of a capture takes 35 MB): a flood of queries
// for random hashes, or a long busy walk, had a counter pin up to 650 MB
// (its old bound, 8 Mi hashes, past which the count stopped). The count
// is exact up to exactDistinct hashes, then a HyperLogLog estimate (64 KiB
// of registers; within about 1%, 0.4% typically). Hashes come from the
// network, so they are hashed with a key of the run's (maphash), lest a
// sender picking them skew the estimate.
const (
	exactDistinct = 1 << 16
	hllBits       = 16
	hllRegisters  = 1 << hllBits
)

type distinctCounter struct {
	exact map[[20]byte]struct{} // nil once the count is an estimate
	seed  maphash.Seed
	regs  []uint8 // hllRegisters of them, once exact is nil
}

func newDistinctCounter() *distinctCounter {
	return &distinctCounter{exact: map[[20]byte]struct{}{}, seed: maphash.MakeSeed()}
}

// add counts h.
func (d *distinctCounter) add(h [20]byte) {
	if d.exact != nil {
		if len(d.exact) < exactDistinct {
			d.exact[h] = struct{}{}
			return
		}
		if _, ok := d.exact[h]; ok {
			return
		}
		d.regs = make([]uint8, hllRegisters)
		for k := range d.exact {
			d.sketch(k)
		}
		d.exact = nil
	}
	d.sketch(h)
}

func (d *distinctCounter) sketch(h [20]byte) {
	x := maphash.Bytes(d.seed, h[:])
	i := x >> (64 - hllBits)
	rank := uint8(bits.LeadingZeros64(x<<hllBits|1<<(hllBits-1))) + 1
	if rank > d.regs[i] {
		d.regs[i] = rank
	}
}

// count is the number of distinct hashes added: exact, or estimated.
func (d *distinctCounter) count() int64 {
	if d.exact != nil {
		return int64(len(d.exact))
	}
	const m = float64(hllRegisters)
	sum, zeros := 0.0, 0
	for _, r := range d.regs {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	est := 0.7213 / (1 + 1.079/m) * m * m / sum
	// Linear counting is the better estimate while registers are still
	// empty: up to 4 m (at the usual 2.5 m the raw estimate is off by 1%).
	if lc := m * math.Log(m/float64(zeros)); zeros > 0 && lc <= 4*m {
		est = lc
	}
	return int64(math.Round(est))
}
