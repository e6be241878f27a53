package plan

import (
	"sync"

	"github.com/infohash/infohash/pipeline/schedule"
)

// A scan's workers share one set of pools, each bounded by the most that
// quota can still give it (caps), so that a pass holds at most --limit
// candidates in all (and a batch per worker), whatever the number of
// workers. A worker checks a row against its own copy of each pool's
// bar first, without the lock, and hands what passes to the pools in
// batches.

// The pools, in pools.k.
const (
	poolNew = iota
	poolRetry
	poolCold
)

// poolOf is the pool of a hash planned for reason: reactivated hashes
// are retries, but for one never tried (a deferral a sighting pulled
// forward), which stays in the new pool, as status counts it (kind new).
func poolOf(reason uint8, never bool) int {
	switch {
	case reason == reasonCold:
		return poolCold
	case reason == reasonNew, reason == reasonReactivated && never:
		return poolNew
	}
	return poolRetry
}

// pools holds the candidates of one scan, by pool, for all its workers.
type pools struct {
	mu     sync.Mutex
	k      [3]topK // by pool
	due    [3]int  // due hashes met so far, by pool (at most limit)
	limit  int
	budget int     // the cold reserve
	share  float64 // the new share
}

// newPools returns pools for a pass of limit jobs, budget of them
// reserved for cold hashes, share for new ones (see quota).
func newPools(limit, budget int, share float64) *pools {
	ps := &pools{limit: limit, budget: budget, share: share}
	for i := range ps.k {
		ps.k[i].k = limit
	}
	return ps
}

// caps returns the most that quota can give each pool once the scan has
// met due hashes in each, whatever it meets after: quota with the due
// counts met so far (they only grow) for the other pools, and no bound
// for the pool itself. quota gives a pool no more when the others have
// more (TestCapsBoundQuota), so a candidate a cap drops is never
// picked: at most cap of the pool's candidates are, the best ones. Pools
// within their caps hold at most limit candidates in all (same test).
func caps(limit, budget int, share float64, due [3]int) [3]int {
	n := due
	for i := range n {
		n[i] = min(n[i], limit) // quota takes no more than limit of any
	}
	capNew, _, _ := quota(limit, budget, share, limit, n[poolRetry], n[poolCold])
	_, capRetry, _ := quota(limit, budget, share, n[poolNew], limit, n[poolCold])
	_, _, capCold := quota(limit, budget, share, n[poolNew], n[poolRetry], limit)
	return [3]int{capNew, capRetry, capCold}
}

// add records the due hashes a worker met since its last call, offers
// its batch and returns each pool's bar.
func (ps *pools) add(due [3]int, batch []cand) [3]bar {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := range due {
		ps.due[i] = min(ps.due[i]+due[i], ps.limit)
	}
	c := caps(ps.limit, ps.budget, ps.share, ps.due)
	for i := range ps.k {
		ps.k[i].limit(c[i])
	}
	for i := range batch {
		ps.k[batch[i].pool].offer(&batch[i])
	}
	var bars [3]bar
	for i := range ps.k {
		bars[i] = ps.k[i].bar()
	}
	return bars
}

// picker returns a worker's way into ps.
func (ps *pools) picker() *picker {
	return &picker{ps: ps, bars: ps.add([3]int{}, nil)}
}

// bar is a pool's threshold as a worker last saw it: closed when the
// pool keeps nothing, set when it was full, with its worst candidate
// then. A pool's cap and worst only go down, so a candidate not better
// than an old bar is one the pool would not keep now either.
type bar struct {
	closed, set bool
	worst       schedule.Priority
}

func (b *bar) wants(p schedule.Priority) bool {
	return !b.closed && (!b.set || p.Compare(b.worst) < 0)
}

// batchSize is how many candidates a worker hands over at once, at most.
const batchSize = 1024

// picker is one worker's side of the pools: the due hashes it met and
// the candidates it kept since it last handed them over.
type picker struct {
	ps    *pools
	due   [3]int
	batch []cand
	bars  [3]bar
}

// met counts a due hash of pool.
func (w *picker) met(pool int) { w.due[pool]++ }

// wants reports whether pool may keep a candidate of priority p, as far
// as the worker knows.
func (w *picker) wants(pool int, p schedule.Priority) bool { return w.bars[pool].wants(p) }

// keep hands c to the pools (in a batch).
func (w *picker) keep(c cand) {
	w.batch = append(w.batch, c)
	if len(w.batch) >= batchSize {
		w.flush()
	}
}

// flush hands over the worker's counts and batch, and updates its bars.
func (w *picker) flush() {
	w.bars = w.ps.add(w.due, w.batch)
	w.due = [3]int{}
	clear(w.batch)
	w.batch = w.batch[:0]
}
