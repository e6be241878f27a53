package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// planRow holds the state columns planning reads; the others are never
// decoded.
type planRow struct {
	InfoHash       schema.Hash `parquet:"info_hash"`
	HashType       int8        `parquet:"hash_type,int(8)"`
	FirstSeen      int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       int64       `parquet:"last_seen,timestamp(millisecond)"`
	Activity       float64     `parquet:"activity"`
	MetadataStatus string      `parquet:"metadata_status,dict"`
	Attempts       int32       `parquet:"attempts"`
	LastAttempt    int64       `parquet:"last_attempt,optional,timestamp(millisecond)"`
	NextRetry      int64       `parquet:"next_retry,optional,timestamp(millisecond)"`
	Tier           string      `parquet:"tier,dict"`
	Reactivated    int64       `parquet:"reactivated_at,optional,timestamp(millisecond)"`
	AvoidPeers     []string    `parquet:"avoid_peers,list"`
}

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
	leases     Leases
	now        int64
	seed       uint64
	limit      int
	coldBudget int
}

// scan reads every partition (workers at a time) and returns the merged
// candidate pools.
func (s *scanner) scan(ctx context.Context, workers int) (*pools, counts, error) {
	t := s.m.Table(dataset.TableState)
	keys := t.PartitionKeys()
	var (
		mu    sync.Mutex
		all   = newPools(s.limit, s.coldBudget)
		total counts
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := newPools(s.limit, s.coldBudget)
			var c counts
			buf := make([]planRow, 1024)
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
					err = s.partition(t, key, buf, local, &c)
				}
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
func (s *scanner) partition(t *dataset.Table, key string, buf []planRow, ps *pools, c *counts) error {
	prefix, err := strconv.ParseUint(key, 16, 8)
	if err != nil {
		return fmt.Errorf("plan-retries: state partition %q: not a hex prefix", key)
	}
	sweep := schedule.InColdWindow(s.p, byte(prefix), s.now)
	for _, f := range t.Partitions[key] {
		cold := schedule.IsColdFile(f.Name)
		if cold && (!sweep || s.coldBudget == 0) {
			continue
		}
		path := s.d.FilePath(t, key, f)
		err := eachRow(path, buf, func(rows []planRow) {
			for i := range rows {
				s.offer(&rows[i], cold, ps, c)
			}
		})
		if err != nil {
			return fmt.Errorf("plan-retries: %s: %w", path, err)
		}
	}
	return nil
}

// offer considers one state row.
func (s *scanner) offer(r *planRow, coldFile bool, ps *pools, c *counts) {
	if coldFile {
		c.ColdScanned++
	} else {
		c.Scanned++
	}
	st := schema.State{
		InfoHash: r.InfoHash, HashType: r.HashType, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen,
		Activity: r.Activity, MetadataStatus: r.MetadataStatus, Attempts: r.Attempts,
		LastAttempt: r.LastAttempt, NextRetry: r.NextRetry, Tier: r.Tier, Reactivated: r.Reactivated,
	}
	if l, ok := s.leases[r.InfoHash]; ok {
		st.LeaseID, st.LeaseUntil = l.LeaseID, l.LeaseUntil
	}
	switch {
	case st.MetadataStatus == schema.StatusFetched:
		c.Fetched++
		return
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
	pool.offer(cand{
		prio: prio, hash: st.InfoHash, hashType: st.HashType, attempt: st.Attempts + 1,
		reason: reason, avoid: append([]string(nil), r.AvoidPeers...), relet: st.LeaseID != "",
	})
}

// eachRow streams the rows of a Parquet file in batches of len(buf),
// decoding only T's columns.
func eachRow[T any](path string, buf []T, fn func([]T)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		return err
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			fn(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
