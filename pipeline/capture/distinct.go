package capture

import (
	"hash/maphash"

	"github.com/axiomhq/hyperloglog"
)

// distinct_hashes counts the distinct hashes of the observations written.
// An exact set of them all grew by about 80 bytes a hash (194 MB of RSS at
// 2 million, where the rest of a capture takes 35 MB): a flood of queries
// for random hashes, or a long busy walk, had a counter pin up to 650 MB
// (its old bound, 8 Mi hashes, past which the count stopped). The count
// is exact up to exactDistinct hashes, then a HyperLogLog estimate
// (axiomhq/hyperloglog at precision 16: 64 KiB of registers, within about
// 1%). Hashes come from the network, so they are hashed with a key of the
// run's (maphash) before the sketch sees them, lest a sender picking them
// skew the estimate (the library's own hash is unkeyed).
const exactDistinct = 1 << 16

type distinctCounter struct {
	exact  map[[20]byte]struct{} // nil once the count is an estimate
	seed   maphash.Seed
	sketch *hyperloglog.Sketch // once exact is nil
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
		d.sketch = hyperloglog.New16NoSparse()
		for k := range d.exact {
			d.sketch.InsertHash(maphash.Bytes(d.seed, k[:]))
		}
		d.exact = nil
	}
	d.sketch.InsertHash(maphash.Bytes(d.seed, h[:]))
}

// count is the number of distinct hashes added: exact, or estimated.
func (d *distinctCounter) count() int64 {
	if d.exact != nil {
		return int64(len(d.exact))
	}
	return int64(d.sketch.Estimate())
}
