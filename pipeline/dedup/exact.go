package dedup

import (
	"bytes"
	"encoding/binary"

	"github.com/infohash/infohash/formats/schema"
)

// The exact store, dedup's last layer: a partition's state files are
// sorted by info_hash, so a Bloom positive is confirmed by reading their
// hash column (statecol.AppendHashes) and searching it.

func hashCmp(x, y schema.Hash) int { return schema.CompareHash(x, y) }

// searchFrom returns the first index k >= from with hs[k] >= *h (len(hs)
// if none), hs being sorted: it gallops from from, then bisects the last
// step. Looking up a sorted batch's hashes one after the other this way
// reads the file's hashes near where the last lookup ended, where a
// bisection of the whole file missed the cache at each step.
//
// Each step compares the first 8 bytes as one number, h's taken once, and
// the rest only on a tie: bytes.Compare of whole hashes, through
// slices.BinarySearchFunc's by-value calls, was 4% of an incremental
// dedup.
func searchFrom(hs []schema.Hash, from int, h *schema.Hash) int {
	key := binary.BigEndian.Uint64(h[:8])
	less := func(k int) bool { // hs[k] < *h
		if x := binary.BigEndian.Uint64(hs[k][:8]); x != key {
			return x < key
		}
		return bytes.Compare(hs[k][8:], h[8:]) < 0
	}
	lo, step := from, 1
	hi := from
	for hi < len(hs) && less(hi) {
		lo = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(hs))
	for lo < hi { // the first k in [lo, hi) with !less(k); hi's is false
		mid := int(uint(lo+hi) >> 1)
		if less(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
