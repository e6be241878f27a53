package plan

import (
	"container/heap"
	"math"
	"slices"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// cand is a due hash that may be planned.
type cand struct {
	prio     schedule.Priority
	hash     schema.Hash
	hashV2   []byte // the full v2 hash when the state knows it
	hashType int8
	attempt  int32
	reason   string
	avoid    []string
	peers    []string // the state's peers (announced endpoints)
	relet    bool     // its previous lease expired unanswered
}

// topK keeps the k best candidates seen (best = lowest
// Priority.Compare). The heap orders small entries, worst at the root,
// that point at their candidate's slot.
type topK struct {
	k     int
	heap  []entry
	slots []cand
}

type entry struct {
	prio schedule.Priority
	slot int32
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) Len() int           { return len(t.heap) }
func (t *topK) Less(i, j int) bool { return t.heap[i].prio.Compare(t.heap[j].prio) > 0 }
func (t *topK) Swap(i, j int)      { t.heap[i], t.heap[j] = t.heap[j], t.heap[i] }
func (t *topK) Push(x any)         { t.heap = append(t.heap, x.(entry)) }
func (t *topK) Pop() any {
	n := len(t.heap) - 1
	e := t.heap[n]
	t.heap = t.heap[:n]
	return e
}

// wants reports whether a candidate of priority p would be kept, so the
// caller can skip building it.
func (t *topK) wants(p schedule.Priority) bool {
	return t.k > 0 && (len(t.heap) < t.k || p.Compare(t.heap[0].prio) < 0)
}

// offer keeps c if it is among the k best.
func (t *topK) offer(c cand) {
	if !t.wants(c.prio) {
		return
	}
	if len(t.heap) < t.k {
		t.slots = append(t.slots, c)
		heap.Push(t, entry{c.prio, int32(len(t.slots) - 1)})
		return
	}
	slot := t.heap[0].slot
	t.slots[slot] = c
	t.heap[0] = entry{c.prio, slot}
	heap.Fix(t, 0)
}

// merge offers every candidate of o.
func (t *topK) merge(o *topK) {
	for _, e := range o.heap {
		t.offer(o.slots[e.slot])
	}
}

// sorted returns the kept candidates, best first.
func (t *topK) sorted() []cand {
	out := make([]cand, 0, len(t.heap))
	for _, e := range t.heap {
		out = append(out, t.slots[e.slot])
	}
	slices.SortFunc(out, func(a, b cand) int { return a.prio.Compare(b.prio) })
	return out
}

// pools holds the candidates of one scan, by pool.
type pools struct {
	new, retry, cold *topK
}

// newPools keeps up to limit candidates of each pool: cold hashes may
// take what new and retried ones leave (see quota).
func newPools(limit int) *pools {
	return &pools{new: newTopK(limit), retry: newTopK(limit), cold: newTopK(limit)}
}

func (p *pools) pool(reason string) *topK {
	switch reason {
	case schema.ReasonNew:
		return p.new
	case schema.ReasonCold:
		return p.cold
	}
	return p.retry
}

func (p *pools) merge(o *pools) {
	p.new.merge(o.new)
	p.retry.merge(o.retry)
	p.cold.merge(o.cold)
}

// coldReserve is the part of limit reserved for due cold hashes:
// floor(limit × coldShare), but at least one job when limit allows any,
// so that a small --limit never freezes the cold tier. quota takes it
// out of what the new share leaves.
func coldReserve(limit int, coldShare float64) int {
	if limit < 1 {
		return 0
	}
	return min(limit, max(1, int(math.Floor(float64(limit)*coldShare))))
}

// quota splits limit between the pools, in this order:
//
//  1. new hashes take up to newLimit(limit, newShare): their share of
//     the whole limit, rounded up, and at least one slot when the share
//     is above 0, so that never-tried hashes always get capacity;
//  2. cold hashes take up to budget (their reserve) of what is left;
//  3. retried hashes take the rest.
//
// A pool that cannot fill its part leaves it to the others: first to
// more new hashes, then to more retries, then to more cold ones.
func quota(limit, budget int, newShare float64, nNew, nRetry, nCold int) (takeNew, takeRetry, takeCold int) {
	takeNew = min(nNew, newLimit(limit, newShare))
	takeCold = min(nCold, budget, limit-takeNew)
	takeRetry = min(nRetry, limit-takeNew-takeCold)
	left := limit - takeNew - takeCold - takeRetry
	more := min(nNew-takeNew, left)
	takeNew, left = takeNew+more, left-more
	takeCold += min(nCold-takeCold, left)
	return takeNew, takeRetry, takeCold
}

// newLimit is the part of limit kept for never-tried hashes:
// ceil(limit × newShare), but at least one slot when newShare > 0 and
// limit allows any.
func newLimit(limit int, newShare float64) int {
	if limit < 1 || !(newShare > 0) {
		return 0
	}
	return min(limit, max(1, int(math.Ceil(float64(limit)*newShare-1e-9))))
}
