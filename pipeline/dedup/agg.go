package dedup

import (
	"bytes"
	"math"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// agg is the in-batch aggregate of one hash's observations: the recent
// set, the first dedup layer.
type agg struct {
	first, last int64
	count       int64
	act         float64 // activity evaluated at last
	src         string  // source of the latest observation
	v2          []byte
	typ         int8
}

// batch aggregates observations per partition.
type batch struct {
	halfLife float64 // ms
	parts    [256]map[schema.Hash]int32
	aggs     [256][]agg
	obs      int64
}

func newBatch(halfLifeMs int64) *batch {
	b := &batch{halfLife: float64(halfLifeMs)}
	for i := range b.parts {
		b.parts[i] = map[schema.Hash]int32{}
	}
	return b
}

// decay is the weight of an observation dt ms older than the reference.
func (b *batch) decay(dt int64) float64 {
	if dt <= 0 {
		return 1
	}
	return math.Exp2(-float64(dt) / b.halfLife)
}

func (b *batch) add(h schema.Hash, v2 []byte, typ int8, at int64, src string) {
	b.obs++
	p := h[0]
	i, ok := b.parts[p][h]
	if !ok {
		b.parts[p][h] = int32(len(b.aggs[p]))
		a := agg{first: at, last: at, count: 1, act: 1, src: src, typ: typ}
		if v2 != nil {
			a.v2 = append([]byte(nil), v2...)
		}
		b.aggs[p] = append(b.aggs[p], a)
		return
	}
	a := &b.aggs[p][i]
	a.count++
	a.first = min(a.first, at)
	switch {
	case at > a.last:
		a.act = a.act*b.decay(at-a.last) + 1
		a.last, a.src = at, src
	case at == a.last:
		a.act++
		a.src = max(a.src, src)
	default:
		a.act += b.decay(a.last - at)
	}
	if typ == schema.HashV2 {
		a.typ = typ
		if a.v2 == nil && v2 != nil {
			a.v2 = append([]byte(nil), v2...)
		}
	}
}

// distinct is the number of distinct hashes in the batch.
func (b *batch) distinct() int64 {
	var n int64
	for _, a := range b.aggs {
		n += int64(len(a))
	}
	return n
}

// entry is one aggregated hash, for sorting.
type entry struct {
	h schema.Hash
	a *agg
}

// sorted returns partition p's aggregates in hash order.
func (b *batch) sorted(p byte) []entry {
	es := make([]entry, 0, len(b.aggs[p]))
	for h, i := range b.parts[p] {
		es = append(es, entry{h, &b.aggs[p][i]})
	}
	slices.SortFunc(es, func(x, y entry) int { return bytes.Compare(x.h[:], y.h[:]) })
	return es
}

// newState is the state row of a hash first seen in this batch.
func newState(e entry, now int64) schema.State {
	return schema.State{
		InfoHash: e.h, InfoHashV2: e.a.v2, HashType: e.a.typ,
		FirstSeen: e.a.first, LastSeen: e.a.last, SeenCount: e.a.count,
		LastSource: e.a.src, Activity: e.a.act,
		MetadataStatus: schema.StatusNew, NextRetry: now, Tier: schema.TierHot,
	}
}

// fold merges a batch aggregate into a known hash's state (existence and
// activity only; scheduling is the caller's).
func (b *batch) fold(st *schema.State, a *agg) {
	st.FirstSeen = min(st.FirstSeen, a.first)
	st.SeenCount += a.count
	switch {
	case a.last > st.LastSeen:
		st.Activity = st.Activity*b.decay(a.last-st.LastSeen) + a.act
		st.LastSeen, st.LastSource = a.last, a.src
	case a.last == st.LastSeen:
		st.Activity += a.act
		st.LastSource = max(st.LastSource, a.src)
	default:
		st.Activity += a.act * b.decay(st.LastSeen-a.last)
	}
	if a.typ == schema.HashV2 {
		st.HashType = schema.HashV2
		if st.InfoHashV2 == nil {
			st.InfoHashV2 = a.v2
		}
	}
}
