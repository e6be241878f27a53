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
	hashType int8
	attempt  int32
	reason   string
	avoid    []string
	relet    bool // its previous lease expired unanswered
}

// topK keeps the k best candidates seen (best = lowest Priority.Compare);
// the worst kept one sits at the root, ready to be evicted.
type topK struct {
	k     int
	items []cand
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return t.items[i].prio.Compare(t.items[j].prio) > 0 }
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(cand)) }
func (t *topK) Pop() any {
	n := len(t.items) - 1
	c := t.items[n]
	t.items = t.items[:n]
	return c
}

// wants reports whether a candidate of priority p would be kept, so the
// caller can skip building it.
func (t *topK) wants(p schedule.Priority) bool {
	return t.k > 0 && (len(t.items) < t.k || p.Compare(t.items[0].prio) < 0)
}

// offer keeps c if it is among the k best.
func (t *topK) offer(c cand) {
	if !t.wants(c.prio) {
		return
	}
	if len(t.items) < t.k {
		heap.Push(t, c)
		return
	}
	t.items[0] = c
	heap.Fix(t, 0)
}

// merge offers every candidate of o.
func (t *topK) merge(o *topK) {
	for _, c := range o.items {
		t.offer(c)
	}
}

// sorted returns the kept candidates, best first.
func (t *topK) sorted() []cand {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b cand) int { return a.prio.Compare(b.prio) })
	return out
}

// pools holds the candidates of one scan, by pool.
type pools struct {
	new, retry, cold *topK
}

func newPools(limit, coldBudget int) *pools {
	return &pools{new: newTopK(limit), retry: newTopK(limit), cold: newTopK(coldBudget)}
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

// quota splits limit between the pools: cold hashes take at most
// coldBudget; of the rest, new hashes get at least ceil(rest × newShare)
// when that many wait, and either pool takes what the other leaves.
func quota(limit, coldBudget int, newShare float64, nNew, nRetry, nCold int) (takeNew, takeRetry, takeCold int) {
	takeCold = min(nCold, coldBudget, limit)
	rest := limit - takeCold
	wantNew := int(math.Ceil(float64(rest)*newShare - 1e-9))
	takeNew = min(nNew, max(wantNew, rest-nRetry))
	takeRetry = min(nRetry, rest-takeNew)
	return takeNew, takeRetry, takeCold
}
