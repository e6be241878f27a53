package plan

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress"
	"github.com/infohash/infohash/pipeline/schedule"
)

// counts are one scan's counters.
type counts struct {
	Scanned, ColdScanned, Fetched, NotDue, Leased, Blocked int64
	Due, DueNew, DueRetry, DueCold                         int64
	ColdInHot                                              int64 // tier=cold rows read in hot files, fetched ones aside
}

func (c *counts) add(o counts) {
	c.Scanned += o.Scanned
	c.ColdScanned += o.ColdScanned
	c.Fetched += o.Fetched
	c.NotDue += o.NotDue
	c.Leased += o.Leased
	c.Blocked += o.Blocked
	c.Due += o.Due
	c.DueNew += o.DueNew
	c.DueRetry += o.DueRetry
	c.DueCold += o.DueCold
	c.ColdInHot += o.ColdInHot
}

// scanner is one planning pass over a snapshot.
type scanner struct {
	d          *dataset.Dataset
	m          *dataset.Manifest
	p          schedule.Policy
	bl         schedule.Blocklist
	leases     leases.Set
	now        int64
	seed       uint64
	limit      int
	share      float64 // the new share (quota)
	coldBudget int
	cursor     int64    // first partition of the cold sweep window
	lost       lostCold // cold hashes of unpublished jobs files, offered outside the window too
}

// hasCold reports whether the snapshot's state has any cold file.
func (s *scanner) hasCold() bool {
	for _, fs := range s.m.Table(dataset.TableState).Partitions {
		for _, f := range fs {
			if schedule.IsColdFile(f.Name) {
				return true
			}
		}
	}
	return false
}

// scan reads every partition (workers at a time) and returns the
// candidate pools, which its workers share. It reports progress, a
// partition at a time, on progressTo unless nil.
func (s *scanner) scan(ctx context.Context, workers int, progressTo io.Writer) (*pools, counts, error) {
	t := s.m.Table(dataset.TableState)
	keys := t.PartitionKeys()
	var prog *progress.Reporter
	if progressTo != nil {
		prog = progress.New(progressTo, "plan-retries: scanning partitions", int64(len(keys)))
		defer prog.Done()
	}
	var (
		mu    sync.Mutex
		all   = newPools(s.limit, s.coldBudget, s.share, s.p.Plan.NewOverdueShare)
		total counts
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := all.picker()
			var c counts
			var g rowGroup
			for {
				mu.Lock()
				if first != nil || next >= len(keys) {
					mu.Unlock()
					break
				}
				key := keys[next]
				next++
				mu.Unlock()
				err := ctx.Err()
				if err == nil {
					err = s.partition(t, key, &g, w, &c)
				}
				prog.Add(1)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					break
				}
			}
			w.flush()
			mu.Lock()
			total.add(c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, total, first
}

// partition offers the due hashes of one partition: its hot files, and
// its cold files when the partition is in this pass's cold window. A cold
// hash whose row is in a hot file (merge archives in place) is offered
// only in the window too, as it would be from a cold file: the sweep, not
// where the row happens to be, decides when a cold hash is looked at. A
// dry run (--limit 0, no cold reserve) reads the same window, so that it
// counts what a pass at the same cursor and time would find due.
func (s *scanner) partition(t *dataset.Table, key string, g *rowGroup, w *picker, c *counts) error {
	prefix, err := strconv.ParseUint(key, 16, 8)
	if err != nil {
		return fmt.Errorf("plan-retries: state partition %q: not a hex prefix", key)
	}
	window := schedule.InColdWindow(s.p, byte(prefix), s.cursor)
	lost := !window && s.lost.in(byte(prefix)) // its cold files read for them alone
	for _, f := range t.Partitions[key] {
		cold := schedule.IsColdFile(f.Name)
		if cold && !window && !lost {
			continue
		}
		err := eachRowGroup(s.d.DataFile(s.m, dataset.TableState, key, f), g, func(g *rowGroup) {
			for i := range g.n {
				s.offer(g, i, cold, window, w, c)
			}
			w.flush() // the pools' counts, caps and bars move on
		})
		if err != nil {
			return fmt.Errorf("plan-retries: %w", err) // err names path
		}
	}
	return nil
}

// statusNames and tierNames turn codes back into the schema's strings.
var (
	statusNames = [...]string{codeOther: schema.StatusNew, codeNew: schema.StatusNew, codeFailed: schema.StatusFailed,
		codeFetched: schema.StatusFetched, codeHot: schema.StatusNew, codeCold: schema.StatusNew}
	tierNames = [...]string{codeOther: schema.TierHot, codeNew: schema.TierHot, codeFailed: schema.TierHot,
		codeFetched: schema.TierHot, codeHot: schema.TierHot, codeCold: schema.TierCold}
)

// offer considers row i of a row group of a cold file or not (coldFile),
// read in the pass's cold window or not: outside it, a cold file's row or
// a cold one is offered only if it is a lost hash (lostCold).
func (s *scanner) offer(g *rowGroup, i int, coldFile, window bool, w *picker, c *counts) {
	if coldFile {
		c.ColdScanned++
		if !window && !s.lost.has(g.infoHash(i)) {
			return
		}
	} else {
		c.Scanned++
	}
	if g.status[i] == codeFetched {
		c.Fetched++
		return
	}
	if !coldFile && g.tier[i] == codeCold {
		c.ColdInHot++
		if !window && !s.lost.has(g.infoHash(i)) {
			return
		}
	}
	h := g.infoHash(i)
	st := schema.State{
		InfoHash: h, HashType: int8(g.hashType[i]), FirstSeen: g.firstSeen[i], LastSeen: g.lastSeen[i],
		Activity: g.activity[i], MetadataStatus: statusNames[g.status[i]], Attempts: g.attempts[i],
		LastAttempt: g.lastAttempt[i], NextRetry: g.nextRetry[i], Tier: tierNames[g.tier[i]], Reactivated: g.reactivated[i],
	}
	if l, ok := s.leases[h]; ok {
		st.LeaseID, st.LeaseUntil = l.LeaseID, l.LeaseUntil
	}
	switch {
	case schedule.Leased(&st, s.now):
		c.Leased++
		return
	case !schedule.Due(&st, s.now):
		c.NotDue++
		return
	case s.bl.Contains(st.InfoHash):
		c.Blocked++
		return
	}
	reason := reasonCode(schedule.Reason(&st))
	if coldFile { // a hot row left in a cold file
		reason = reasonCold
	}
	c.Due++
	pool := poolOf(reason, st.MetadataStatus == schema.StatusNew)
	switch pool {
	case poolNew:
		c.DueNew++
	case poolCold:
		c.DueCold++
	default:
		c.DueRetry++
	}
	w.met(pool)
	prio := schedule.PriorityOf(s.p, &st, s.now, s.seed)
	if !w.wants(pool, prio) {
		return
	}
	// Most rows have no lists nor v2 hash: their candidate has no extra.
	var extra *candExtra
	v2 := g.infoHashV2(i)
	if g.avoidAt[i+1] > g.avoidAt[i] || g.peersAt[i+1] > g.peersAt[i] || v2 != nil {
		extra = &candExtra{hashV2: slices.Clone(v2), avoid: slices.Clone(g.avoid[g.avoidAt[i]:g.avoidAt[i+1]]),
			peers: slices.Clone(g.peers[g.peersAt[i]:g.peersAt[i+1]])}
	}
	w.keep(cand{prio: prio, hash: st.InfoHash, hashType: st.HashType, reason: reason,
		pool: uint8(pool), relet: st.LeaseID != "", attempt: min(st.Attempts, math.MaxInt32-1) + 1, extra: extra})
}
