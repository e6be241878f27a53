package plan

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// LeaseGrace is how long an expired lease is kept after its end: a late
// result still finds the lease it was planned under (and is applied) until
// the hash is planned again or the grace ends.
const LeaseGrace = 7 * 24 * 60 * 60 * 1000 // ms

// Leases maps each leased hash to its lease.
type Leases map[schema.Hash]schema.Lease

// ReadLeases reads the lease table of snapshot m.
func ReadLeases(d *dataset.Dataset, m *dataset.Manifest) (Leases, error) {
	t := m.Table(dataset.TableLeases)
	rows, err := dataset.ReadPartition[schema.Lease](d, t, "")
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	out := make(Leases, len(rows))
	for _, l := range rows {
		if old, ok := out[l.InfoHash]; !ok || l.PlannedAt >= old.PlannedAt {
			out[l.InfoHash] = l
		}
	}
	return out, nil
}

// Live reports whether h is leased at now.
func (ls Leases) Live(h schema.Hash, now int64) bool {
	l, ok := ls[h]
	return ok && l.LeaseUntil > now
}

// LeaseExpired reports whether l ended more than LeaseGrace before now:
// such a lease is gone for results (merge) and dropped at the next commit.
func LeaseExpired(l schema.Lease, now int64) bool { return l.LeaseUntil+LeaseGrace < now }

// Prune drops leases that ended more than LeaseGrace before now and
// reports how many it dropped.
func (ls Leases) Prune(now int64) int {
	n := 0
	for h, l := range ls {
		if LeaseExpired(l, now) {
			delete(ls, h)
			n++
		}
	}
	return n
}

// WriteLeases stages ls as the whole lease table of tx (one file sorted by
// hash; none when empty).
func WriteLeases(tx *dataset.Tx, ls Leases) error {
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
