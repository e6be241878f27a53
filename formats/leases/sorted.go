package leases

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// Sorted is a lease table held as its rows sorted by hash, each hash
// once: 80 bytes a lease, where a Set's map takes over 200. merge, which
// looks leases up but adds none, holds the table so.
type Sorted []schema.Lease

// ReadSorted reads the lease table of snapshot m; of a hash's rows it
// keeps the one Read keeps (supersedes).
func ReadSorted(d *dataset.Dataset, m *dataset.Manifest) (Sorted, error) {
	t := m.Table(dataset.TableLeases)
	rows, err := dataset.ReadPartition[schema.Lease](d, t, "")
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	byHash := func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) }
	if slices.IsSortedFunc(rows, byHash) && !hasDuplicates(rows) {
		return rows, nil // as Write writes it
	}
	slices.SortStableFunc(rows, byHash) // a hash's rows stay in the order read
	out := rows[:0]
	for i := 0; i < len(rows); {
		keep := i
		j := i + 1
		for ; j < len(rows) && rows[j].InfoHash == rows[i].InfoHash; j++ {
			if supersedes(rows[j], rows[keep]) {
				keep = j
			}
		}
		out = append(out, rows[keep])
		i = j
	}
	return slices.Clip(out), nil
}

// hasDuplicates reports whether rows, sorted by hash, hold a hash twice.
func hasDuplicates(rows []schema.Lease) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].InfoHash == rows[i-1].InfoHash {
			return true
		}
	}
	return false
}

// Get returns h's lease.
func (s Sorted) Get(h schema.Hash) (schema.Lease, bool) {
	i, ok := slices.BinarySearchFunc(s, h, func(l schema.Lease, h schema.Hash) int { return bytes.Compare(l.InfoHash[:], h[:]) })
	if !ok {
		return schema.Lease{}, false
	}
	return s[i], true
}

// Live reports whether h is leased at now.
func (s Sorted) Live(h schema.Hash, now int64) bool {
	l, ok := s.Get(h)
	return ok && l.LeaseUntil > now
}

// Expired counts the leases that ended more than Grace before now: those
// Write drops.
func (s Sorted) Expired(now int64) int {
	n := 0
	for i := range s {
		if Expired(s[i], now) {
			n++
		}
	}
	return n
}

// Write stages as the whole lease table of tx the leases of s but the
// expired ones at now (Expired) and those of the hashes of drop, sorted
// by hash (those released): one file sorted by hash, none when no lease
// is left. It writes them from s, a batch at a time, without a copy.
func (s Sorted) Write(tx *dataset.Tx, drop []schema.Hash, now int64) error {
	if !slices.IsSortedFunc(drop, func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) }) {
		return fmt.Errorf("leases: the hashes to drop are not sorted")
	}
	kept := func(yield func(schema.Lease) bool) {
		k := 0
		for _, l := range s {
			for k < len(drop) && bytes.Compare(drop[k][:], l.InfoHash[:]) < 0 {
				k++
			}
			if (k < len(drop) && drop[k] == l.InfoHash) || Expired(l, now) {
				continue
			}
			if !yield(l) {
				return
			}
		}
	}
	var rows int64
	for range kept {
		rows++
	}
	if rows == 0 {
		tx.SetPartition(dataset.TableLeases, "", nil)
		return nil
	}
	fi, err := writeSorted(tx, rows, kept)
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	tx.SetPartition(dataset.TableLeases, "", []dataset.FileInfo{fi})
	return nil
}
