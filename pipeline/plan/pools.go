package plan

import (
	"math"
	"slices"
	"sync"

	"github.com/infohash/infohash/formats/schema"
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
// over holds the new pool's overdue hashes again, the longest waiting
// first, as many as its overdue reserve can take (overdueReserve of the
// new pool's cap): a pass holds up to that many more candidates.
type pools struct {
	mu        sync.Mutex
	k         [3]topK // by pool
	over      topK    // overdue new hashes, by Priority.OverdueFirst
	due       [3]int  // due hashes met so far, by pool (at most limit)
	limit     int
	budget    int     // the cold reserve
	share     float64 // the new share
	overShare float64 // the overdue share of the new pool
}

// newPools returns pools for a pass of limit jobs, budget of them
// reserved for cold hashes, share for new ones (see quota), overShare of
// those for overdue ones (see overdueReserve).
func newPools(limit, budget int, share, overShare float64) *pools {
	ps := &pools{limit: limit, budget: budget, share: share, overShare: overShare}
	for i := range ps.k {
		ps.k[i].k = limit
	}
	ps.over.k = overdueReserve(limit, overShare)
	return ps
}

// overdueReserve is the part of the new pool's n jobs kept for overdue
// hashes (schedule.Overdue): floor(n × share), but at least one job
// when share is above 0 and n allows any, so that each pass plans one.
func overdueReserve(n int, share float64) int {
	if n < 1 || !(share > 0) {
		return 0
	}
	return min(n, max(1, int(math.Floor(float64(n)*share))))
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
// its batch and returns each pool's bar, then the overdue heap's.
func (ps *pools) add(due [3]int, batch []cand) [4]bar {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := range due {
		ps.due[i] = min(ps.due[i]+due[i], ps.limit)
	}
	c := caps(ps.limit, ps.budget, ps.share, ps.due)
	for i := range ps.k {
		ps.k[i].limit(c[i])
	}
	ps.over.limit(overdueReserve(c[poolNew], ps.overShare))
	for i := range batch {
		ps.k[batch[i].pool].offer(&batch[i])
		if batch[i].pool == poolNew && batch[i].prio.Overdue {
			o := batch[i]
			o.prio = o.prio.OverdueFirst()
			ps.over.offer(&o)
		}
	}
	var bars [4]bar
	for i := range ps.k {
		bars[i] = ps.k[i].bar()
	}
	bars[overBar] = ps.over.bar()
	return bars
}

// pick returns the candidates planned, by pool, best first, n[i] of
// pool i (quota's): of the new pool's, overdueReserve of them go to the
// longest waiting overdue hashes (ranked as starved: first but for
// reactivated ones; marked overdue), the rest to the best others by
// Priority. Those are among the n best of the pool, all of which it
// keeps. ps is spent.
func (ps *pools) pick(n [3]int) [3][]cand {
	var picked [3][]cand
	for i := range n {
		picked[i] = ps.k[i].sorted()[:n[i]]
	}
	over := ps.over.sorted()
	over = over[:min(len(over), overdueReserve(n[poolNew], ps.overShare))]
	if len(over) == 0 {
		return picked
	}
	taken := make(map[schema.Hash]bool, len(over))
	for i := range over {
		taken[over[i].hash] = true
	}
	all := append(make([]cand, 0, n[poolNew]), over...)
	for i := range all {
		all[i].overdue = true // counted apart (Stats.PlannedNewOverdue)
	}
	for _, c := range picked[poolNew] {
		if len(all) < n[poolNew] && !taken[c.hash] {
			all = append(all, c)
		}
	}
	slices.SortFunc(all, func(a, b cand) int { return a.prio.Compare(b.prio) })
	picked[poolNew] = all
	return picked
}

// picker returns a worker's way into ps.
func (ps *pools) picker() *picker {
	return &picker{ps: ps, bars: ps.add([3]int{}, nil)}
}

// overBar is the index of the overdue heap's bar, after the pools'.
const overBar = 3

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
	bars  [4]bar // by pool, then overBar
}

// met counts a due hash of pool.
func (w *picker) met(pool int) { w.due[pool]++ }

// wants reports whether pool (or the overdue heap) may keep a candidate
// of priority p, as far as the worker knows.
func (w *picker) wants(pool int, p schedule.Priority) bool {
	return w.bars[pool].wants(p) || pool == poolNew && p.Overdue && w.bars[overBar].wants(p.OverdueFirst())
}

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
