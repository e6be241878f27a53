package merge

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// sortResults orders results in place by hash, then attempts before
// released rows (so that an attempt under a lease counts whatever the
// order of the inputs: a released row then finds the lease used up),
// then attempt time, then input order. It sorts small keys, not the
// rows (368 bytes each; sorting indexes to them read them all over
// memory: 5-10 s at 1M results), and then moves each row once to its
// place, cycle by cycle: a sorted copy doubled what merge held at its
// peak.
func sortResults(rs []result) {
	keys := make([]resultKey, len(rs))
	for i := range rs {
		keys[i] = resultKey{hash: rs[i].InfoHash, at: rs[i].AttemptedAt, i: int32(i)}
		if rs[i].Outcome == schema.OutcomeReleased {
			keys[i].released = 1
		}
	}
	slices.SortFunc(keys, func(a, b resultKey) int {
		return cmp.Or(bytes.Compare(a.hash[:], b.hash[:]), cmp.Compare(a.released, b.released), cmp.Compare(a.at, b.at), cmp.Compare(a.i, b.i))
	})
	// Row keys[k].i goes to k. A cycle k <- keys[k].i <- ... ends where
	// it began: k's row, set aside, goes to its last place. A place
	// filled is marked keys[j].i == j.
	for k := range keys {
		if keys[k].i == int32(k) {
			continue
		}
		first := rs[k]
		j := k
		for {
			src := int(keys[j].i)
			keys[j].i = int32(j)
			if src == k {
				rs[j] = first
				break
			}
			rs[j] = rs[src]
			j = src
		}
	}
}

// resultKey is what sortResults orders a result by, and its index.
type resultKey struct {
	hash     schema.Hash
	released uint8 // 1 for a released row: after the attempts
	at       int64
	i        int32
}

// sortHashes sorts hs in increasing order.
func sortHashes(hs []schema.Hash) {
	slices.SortFunc(hs, func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) })
}
