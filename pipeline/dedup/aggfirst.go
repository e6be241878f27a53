// An aggregate's first sighting: its time (kept as a distance to the
// last, or aside when too far) and its source (kept in a byte, or aside
// when its id does not fit).

package dedup

import (
	"math"

	"github.com/infohash/infohash/formats/schema"
)

// first is a's first sighting. (Small enough to inline into fold1, which
// calls it for every repeated observation: the rare wide span is not.)
func (b *batch) first(a *agg) int64 {
	if a.flags&aggWide == 0 {
		return a.last - int64(a.firstD)
	}
	return b.wideFirst(a)
}

// wideFirst is the first sighting of a wide aggregate (aggWide).
func (b *batch) wideFirst(a *agg) int64 {
	b.v2mu.Lock()
	defer b.v2mu.Unlock()
	return b.wide[a.h]
}

// setFirstSrc sets a's first source to id src. (Inlined into fold1,
// which calls it for every new hash: the rare large id is not.)
func (b *batch) setFirstSrc(a *agg, src uint16) {
	if src < wideSrc {
		a.fsrc = uint8(src)
		return
	}
	b.setWideFirstSrc(a, src)
}

// setWideFirstSrc keeps a first source id too large for agg.fsrc aside.
func (b *batch) setWideFirstSrc(a *agg, src uint16) {
	a.fsrc = wideSrc
	b.v2mu.Lock()
	if b.firstSrcs == nil {
		b.firstSrcs = map[schema.Hash]uint16{}
	}
	b.firstSrcs[a.h] = src
	b.v2mu.Unlock()
}

// firstSrc is the id of a's first source.
func (b *batch) firstSrc(a *agg) uint16 {
	if a.fsrc != wideSrc {
		return uint16(a.fsrc)
	}
	return b.wideFirstSrc(a)
}

// wideFirstSrc is the first source id kept aside for a.
func (b *batch) wideFirstSrc(a *agg) uint16 {
	b.v2mu.Lock()
	defer b.v2mu.Unlock()
	return b.firstSrcs[a.h]
}

// setSpan sets a's first and last sightings.
func (b *batch) setSpan(a *agg, first, last int64) {
	a.last = last
	if d := last - first; d <= math.MaxUint32 {
		a.firstD, a.flags = uint32(d), a.flags&^aggWide
		return
	}
	a.flags |= aggWide
	b.v2mu.Lock()
	if b.wide == nil {
		b.wide = map[schema.Hash]int64{}
	}
	b.wide[a.h] = first
	b.v2mu.Unlock()
}
