// An aggregate's newest announce_peer observation, which the reactivation
// rule weighs apart from the other sightings (schedule.Reactivate): fold1
// keeps it in its table's anns, comparing each observation's source with
// annView, when the batch is applied to a state with rows (trackAnn): a
// map beside the aggregates, not a field of theirs, so that a first
// import (no known hash, no reactivation) pays nothing for it: 8 bytes
// more an aggregate were 140 MB more at 100M observations of 20M hashes.

package dedup

import (
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// view sets the sources the folding goroutines see: srcView to srcs, the
// batch's sources as some goroutine interned them so far, and annView to
// the announce's id among them (noSource if they do not hold it). Only
// the goroutine that interns calls it while no worker folds: it passes
// b.srcs and b.announce; or the one it hands rows to: announceOf.
func (b *batch) view(srcs []string, announce uint16) {
	b.srcView, b.annView = srcs, announce
}

// announceOf is the announce's id in srcs, a copy of b.srcs taken by the
// goroutine that interns (noSource if it holds none): b.announce is that
// goroutine's, which may change it meanwhile. Ids never change, so once
// the announce is found it is not looked for again, and only sources not
// searched yet are.
func (b *batch) announceOf(srcs []string) uint16 {
	if b.annView != noSource {
		return b.annView
	}
	if i := slices.Index(srcs[min(b.annSeen, len(srcs)):], schema.SourceAnnouncePeer); i >= 0 {
		return uint16(b.annSeen + i)
	}
	b.annSeen = max(b.annSeen, len(srcs))
	return noSource
}

// noteAnnounce keeps at as h's newest announce, if it is newer.
func (t *table) noteAnnounce(h *schema.Hash, at int64) {
	if t.anns == nil {
		t.anns = map[schema.Hash]int64{}
	}
	if at > t.anns[*h] {
		t.anns[*h] = at
	}
}

// announcedAt is h's newest announce_peer observation in the batch (0:
// none, or the batch keeps none: trackAnn).
func (b *batch) announcedAt(h *schema.Hash) int64 {
	return b.parts[h[0]].anns[*h]
}
