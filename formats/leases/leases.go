// Package leases reads and writes a dataset's leases table: which hashes
// plan-retries handed to fetch jobs, until when, and under which lease_id.
// plan-retries writes it; merge reads it to apply a result once, by lease,
// and releases what it applied; status reports it.
package leases

import (
	"bytes"
	"fmt"
	"iter"
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
	return read(d, m, dataset.ReadPartition[schema.Lease])
}

// ReadSource is Read for a writer that writes the leases into a new file
// (plan-retries): each file is checked whole against its manifest's
// record once read (dataset.ReadSourcePartition).
func ReadSource(d *dataset.Dataset, m *dataset.Manifest) (Set, error) {
	return read(d, m, dataset.ReadSourcePartition[schema.Lease])
}

func read(d *dataset.Dataset, m *dataset.Manifest,
	readPartition func(*dataset.Dataset, *dataset.Table, string) ([]schema.Lease, error)) (Set, error) {
	t := m.Table(dataset.TableLeases)
	rows, err := readPartition(d, t, "")
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	out := make(Set, len(rows))
	for _, l := range rows {
		if old, ok := out[l.InfoHash]; !ok || supersedes(l, old) {
			out[l.InfoHash] = l
		}
	}
	return out, nil
}

// supersedes reports whether l, read after old, is the hash's lease
// rather than old: a table holds one row a hash, but of two rows the
// later planned wins, and of equal times the last read.
func supersedes(l, old schema.Lease) bool { return l.PlannedAt >= old.PlannedAt }

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
func Write(tx *dataset.Tx, ls Set) error { return WriteMerged(tx, ls, nil) }

// WriteMerged stages as the whole lease table of tx the leases of ls and
// those added yields, which must come in increasing hash order (each
// hash once; it is ranged over twice, to count and to write): one file
// sorted by hash, none when both are empty. A hash in both takes added's
// lease. It writes the two sorted sequences merged, a batch at a time, so
// it holds a copy of neither: only ls's hashes, sorted (20 bytes a lease,
// where the leases sorted took 80, and adding added's to ls grew the map
// by over 200 bytes a lease).
func WriteMerged(tx *dataset.Tx, ls Set, added iter.Seq[schema.Lease]) error {
	keys := make([]schema.Hash, 0, len(ls))
	for h := range ls {
		keys = append(keys, h)
	}
	slices.SortFunc(keys, func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) })
	if added == nil {
		added = func(func(schema.Lease) bool) {}
	}
	rows := int64(len(ls))
	for l := range added {
		if _, ok := ls[l.InfoHash]; !ok {
			rows++
		}
	}
	if rows == 0 {
		tx.SetPartition(dataset.TableLeases, "", nil)
		return nil
	}
	merged := func(yield func(schema.Lease) bool) {
		i := 0
		for l := range added {
			for ; i < len(keys) && bytes.Compare(keys[i][:], l.InfoHash[:]) < 0; i++ {
				if !yield(ls[keys[i]]) {
					return
				}
			}
			if i < len(keys) && keys[i] == l.InfoHash {
				i++ // added's lease replaces it
			}
			if !yield(l) {
				return
			}
		}
		for ; i < len(keys); i++ {
			if !yield(ls[keys[i]]) {
				return
			}
		}
	}
	fi, err := writeSorted(tx, rows, merged)
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	tx.SetPartition(dataset.TableLeases, "", []dataset.FileInfo{fi})
	return nil
}
