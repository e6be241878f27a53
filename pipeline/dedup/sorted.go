// The aggregates of a partition in hash order, for the apply phase.

package dedup

import (
	"encoding/binary"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// entry is one aggregated hash, for sorting.
type entry struct {
	agg // a copy of the aggregate (its hash, h, included)
}

// Entries carry a copy of their aggregate rather than an index into the
// table: the apply phase reads the aggregates in hash order, which is
// random in the table's memory, and at 100M observations (960 MB of
// aggregates) each read missed the cache: building new rows was 11% of
// the run. sorted reads the table in order instead, and its scattered
// writes do not hold the processor up as those reads did. (An index, not
// a pointer, was the older choice: a pointer into the arena, off the Go
// heap, made the collector look up every entry.)

// sorted returns partition p's aggregates in hash order, in dst's memory
// when it is large enough (each worker reuses one: fresh memory per
// partition cost page faults).
func (b *batch) sorted(p byte, dst []entry) []entry {
	t := &b.parts[p]
	// Every hash here starts with byte p, and hashes are uniform: place
	// them by their next bits (a counting sort), as many as make buckets
	// of one or two hashes, then sort each bucket by the following 8
	// bytes as one big-endian word. Linear where a comparison sort of the
	// whole partition was 8% of a 10M run, and pdqsort of buckets of ~300
	// was 6% of a 100M run; buckets of ~30 (by the next byte alone) spent
	// 0.04 s of a 10M run's CPU in insertion sort.
	bits := 8
	for bits < 16 && t.n > 2<<bits {
		bits++
	}
	key := func(h *schema.Hash) int { return int(binary.BigEndian.Uint32(h[1:5]) >> (32 - bits)) }
	nb := 1 << bits
	counts := make([]int32, nb+1)
	for i := 0; i < t.n; i++ {
		counts[key(&t.at(i).h)+1]++
	}
	for k := 1; k <= nb; k++ {
		counts[k] += counts[k-1]
	}
	es := dst[:0]
	if cap(es) < t.n {
		es = make([]entry, t.n)
	}
	es = es[:t.n]
	next := slices.Clone(counts)
	for i := 0; i < t.n; i++ {
		a := t.at(i)
		k := key(&a.h)
		es[next[k]].agg = *a
		next[k]++
	}
	for k := 0; k < nb; k++ {
		sortFew(es[counts[k]:counts[k+1]], 64, entryBefore)
	}
	return es
}
