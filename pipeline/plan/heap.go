package plan

import (
	"math"
	"slices"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// cand is a due hash that may be planned. It is kept small (72 bytes,
// one pointer, nil for most hashes), since a pass may hold about --limit
// of them: what only a job needs (v2 hash, avoid list, peers) sits in
// extra, set only when the row has any.
type cand struct {
	prio     schedule.Priority
	hash     schema.Hash
	hashType int8
	reason   uint8 // reasonNew, reasonRetry, reasonReactivated or reasonCold
	pool     uint8 // poolNew, poolRetry or poolCold (poolOf)
	relet    bool  // its previous lease expired unanswered
	overdue  bool  // picked by the new pool's overdue reserve (pools.pick)
	attempt  int32
	extra    *candExtra
}

// candExtra holds a candidate's lists and full v2 hash.
type candExtra struct {
	hashV2 []byte   // the full v2 hash when the state knows it
	avoid  []string // the state's avoid_peers
	peers  []string // the state's peers (announced endpoints)
}

// Reason codes of a cand; its pool is poolOf(code, never tried).
const (
	reasonNew uint8 = iota
	reasonRetry
	reasonReactivated
	reasonCold
)

var reasonNames = [...]string{reasonNew: schema.ReasonNew, reasonRetry: schema.ReasonRetry,
	reasonReactivated: schema.ReasonReactivated, reasonCold: schema.ReasonCold}

func reasonCode(reason string) uint8 {
	switch reason {
	case schema.ReasonNew:
		return reasonNew
	case schema.ReasonReactivated:
		return reasonReactivated
	case schema.ReasonCold:
		return reasonCold
	}
	return reasonRetry
}

func (c *cand) hashV2() []byte {
	if c.extra == nil {
		return nil
	}
	return c.extra.hashV2
}

func (c *cand) avoid() []string {
	if c.extra == nil {
		return nil
	}
	return c.extra.avoid
}

func (c *cand) peers() []string {
	if c.extra == nil {
		return nil
	}
	return c.extra.peers
}

// topK keeps the k best candidates seen (best = lowest
// Priority.Compare) in a binary heap, worst at the root. k may only
// shrink (limit), dropping the worst.
type topK struct {
	k    int
	heap []cand
}

func (t *topK) Len() int { return len(t.heap) }

// worse reports whether heap[i] goes after heap[j].
func (t *topK) worse(i, j int) bool { return t.heap[i].prio.Compare(t.heap[j].prio) > 0 }

// wants reports whether a candidate of priority p would be kept, so the
// caller can skip building it.
func (t *topK) wants(p schedule.Priority) bool {
	return t.k > 0 && (len(t.heap) < t.k || p.Compare(t.heap[0].prio) < 0)
}

// offer keeps c if it is among the k best.
func (t *topK) offer(c *cand) {
	if !t.wants(c.prio) {
		return
	}
	if len(t.heap) < t.k {
		if n := len(t.heap); n == cap(t.heap) { // double, but never past k
			t.heap = slices.Grow(t.heap, min(max(2*n, 64), t.k)-n)
		}
		t.heap = append(t.heap, *c)
		t.up(len(t.heap) - 1)
		return
	}
	t.heap[0] = *c
	t.down(0)
}

// limit lowers k to at most k, dropping the worst candidates kept.
func (t *topK) limit(k int) {
	t.k = min(t.k, max(k, 0))
	for len(t.heap) > t.k {
		n := len(t.heap) - 1
		t.heap[0] = t.heap[n]
		t.heap[n] = cand{}
		t.heap = t.heap[:n]
		t.down(0)
	}
	if len(t.heap) == 0 {
		t.heap = nil
	}
}

// bar is what a worker may reject without asking t (see bar).
func (t *topK) bar() bar {
	if t.k == 0 {
		return bar{closed: true}
	}
	if len(t.heap) < t.k {
		return bar{}
	}
	return bar{set: true, worst: t.heap[0].prio}
}

func (t *topK) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !t.worse(i, parent) {
			return
		}
		t.heap[i], t.heap[parent] = t.heap[parent], t.heap[i]
		i = parent
	}
}

func (t *topK) down(i int) {
	n := len(t.heap)
	for {
		worst, l := i, 2*i+1
		if l < n && t.worse(l, worst) {
			worst = l
		}
		if r := l + 1; r < n && t.worse(r, worst) {
			worst = r
		}
		if worst == i {
			return
		}
		t.heap[i], t.heap[worst] = t.heap[worst], t.heap[i]
		i = worst
	}
}

// sorted returns the kept candidates, best first, in place: t is spent.
func (t *topK) sorted() []cand {
	out := t.heap
	t.heap, t.k = nil, 0
	slices.SortFunc(out, func(a, b cand) int { return a.prio.Compare(b.prio) })
	return out
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
// With a limit of 2 or more, each tier with due hashes gets at least one
// job, whatever the shares: when cold hashes are due, new ones take at
// most limit-1 (a new share near 1 would leave the cold tier nothing);
// when hot hashes (new or retried) are due, cold ones take at most
// limit-1 of the reserve (a cold share of 1). A limit of 1 goes to a new
// hash (a share above 0), else a cold one, else a retry, else a new one.
//
// A pool that cannot fill its part leaves it to the others: first to
// more new hashes, then to more retries, then to more cold ones.
func quota(limit, budget int, newShare float64, nNew, nRetry, nCold int) (takeNew, takeRetry, takeCold int) {
	newMost, coldMost := newLimit(limit, newShare), budget
	if limit >= 2 {
		if nCold > 0 {
			newMost = min(newMost, limit-1)
		}
		if nNew+nRetry > 0 {
			coldMost = min(coldMost, limit-1)
		}
	}
	takeNew = min(nNew, newMost)
	takeCold = min(nCold, coldMost, limit-takeNew)
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
