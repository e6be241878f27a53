// Package leases reads and writes a dataset's leases table: which hashes
// plan-retries handed to fetch jobs, until when, and under which lease_id.
// plan-retries writes it; merge reads it to apply a result once, by lease,
// and releases what it applied; status reports it.
package leases

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// Grace is how long an expired lease is kept after its end: a late
// result still finds the lease it was planned under (and is applied) until
// the hash is planned again or the grace ends.
const Grace = 7 * 24 * 60 * 60 * 1000 // ms

// Set maps each leased hash to its lease.
type Set map[schema.Hash]schema.Lease

// Read reads the lease table of snapshot m.
func Read(d *dataset.Dataset, m *dataset.Manifest) (Set, error) {
	t := m.Table(dataset.TableLeases)
	rows, err := dataset.ReadPartition[schema.Lease](d, t, "")
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	out := make(Set, len(rows))
	for _, l := range rows {
		if old, ok := out[l.InfoHash]; !ok || l.PlannedAt >= old.PlannedAt {
			out[l.InfoHash] = l
		}
	}
	return out, nil
}

// Live reports whether h is leased at now.
func (ls Set) Live(h schema.Hash, now int64) bool {
	l, ok := ls[h]
	return ok && l.LeaseUntil > now
}

// Expired reports whether l ended more than Grace before now:
// such a lease is gone for results (merge) and dropped at the next commit.
func Expired(l schema.Lease, now int64) bool { return l.LeaseUntil+Grace < now }

// Prune drops leases that ended more than Grace before now and
// reports how many it dropped.
func (ls Set) Prune(now int64) int {
	n := 0
	for h, l := range ls {
		if Expired(l, now) {
			delete(ls, h)
			n++
		}
	}
	return n
}

// Write stages ls as the whole lease table of tx (one file sorted by
// hash; none when empty).
func Write(tx *dataset.Tx, ls Set) error {
	if len(ls) == 0 {
		tx.SetPartition(dataset.TableLeases, "", nil)
		return nil
	}
	rows := make([]schema.Lease, 0, len(ls))
	for _, l := range ls {
		rows = append(rows, l)
	}
	slices.SortFunc(rows, func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	fi, err := dataset.WriteStaged(tx, dataset.TableLeases, "", rows)
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	tx.SetPartition(dataset.TableLeases, "", []dataset.FileInfo{fi})
	return nil
}
