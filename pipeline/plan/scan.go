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
	coldBudget int
	cursor     int64 // first partition of the cold sweep window
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

// scan reads every partition (workers at a time) and returns the merged
// candidate pools. It reports progress, a partition at a time, on
// progressTo unless nil.
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
		all   = newPools(s.limit)
		total counts
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := newPools(s.limit)
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
					err = s.partition(t, key, &g, local, &c)
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
			mu.Lock()
			all.merge(local)
			total.add(c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, total, first
}

// partition offers the due hashes of one partition: its hot files, and
// its cold files when the partition is in this pass's cold window.
func (s *scanner) partition(t *dataset.Table, key string, g *rowGroup, ps *pools, c *counts) error {
	prefix, err := strconv.ParseUint(key, 16, 8)
	if err != nil {
		return fmt.Errorf("plan-retries: state partition %q: not a hex prefix", key)
	}
	sweep := schedule.InColdWindow(s.p, byte(prefix), s.cursor)
	for _, f := range t.Partitions[key] {
		cold := schedule.IsColdFile(f.Name)
		if cold && (!sweep || s.coldBudget == 0) {
			continue
		}
		err := eachRowGroup(s.d.DataFile(s.m, dataset.TableState, key, f), g, func(g *rowGroup) {
			for i := range g.n {
				s.offer(g, i, cold, ps, c)
			}
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

// offer considers row i of a row group.
func (s *scanner) offer(g *rowGroup, i int, coldFile bool, ps *pools, c *counts) {
	if coldFile {
		c.ColdScanned++
	} else {
		c.Scanned++
	}
	if g.status[i] == codeFetched {
		c.Fetched++
		return
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
	reason := schedule.Reason(&st)
	if coldFile && reason != schema.ReasonCold { // a hot row left in a cold file
		reason = schema.ReasonCold
	}
	c.Due++
	switch reason {
	case schema.ReasonNew:
		c.DueNew++
	case schema.ReasonCold:
		c.DueCold++
	default:
		c.DueRetry++
	}
	pool := ps.pool(reason)
	prio := schedule.PriorityOf(s.p, &st, s.now, s.seed)
	if !pool.wants(prio) {
		return
	}
	avoid := []string{}
	if g.avoidAt[i+1] > g.avoidAt[i] {
		avoid = append(avoid, g.avoid[g.avoidAt[i]:g.avoidAt[i+1]]...)
	}
	var peers []string
	if g.peersAt[i+1] > g.peersAt[i] {
		peers = slices.Clone(g.peers[g.peersAt[i]:g.peersAt[i+1]])
	}
	pool.offer(cand{
		prio: prio, hash: st.InfoHash, hashV2: g.infoHashV2(i), hashType: st.HashType, attempt: min(st.Attempts, math.MaxInt32-1) + 1,
		reason: reason, avoid: avoid, peers: peers, relet: st.LeaseID != "",
	})
}
