package dedup

import (
	"bytes"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// The exact store, dedup's last layer: a partition's state files are
// sorted by info_hash, so a Bloom positive is confirmed by reading their
// hash column (statecol.AppendHashes) and searching it.

func hashCmp(x, y schema.Hash) int { return bytes.Compare(x[:], y[:]) }

// searchFrom returns the first index k >= from with hs[k] >= *h (len(hs)
// if none), hs being sorted: it gallops from from, then bisects the last
// step. Looking up a sorted batch's hashes one after the other this way
// reads the file's hashes near where the last lookup ended, where a
// bisection of the whole file missed the cache at each step.
func searchFrom(hs []schema.Hash, from int, h *schema.Hash) int {
	lo, step := from, 1
	hi := from
	for hi < len(hs) && bytes.Compare(hs[hi][:], h[:]) < 0 {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(hs))
	k, _ := slices.BinarySearchFunc(hs[lo:hi], *h, hashCmp)
	return lo + k
}
