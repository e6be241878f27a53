package leases

import (
	"bytes"
	"fmt"
	"iter"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// Sorted is a lease table held as its rows sorted by hash, each hash
// once, packed: 48 bytes a lease, its lease_id and reason numbers in a
// table of strings (a plan-retries run leases all its jobs under one
// id, and reasons are a few names). merge, which looks leases up but
// adds none, holds the table so: as schema.Lease rows it took 80 bytes
// a lease and their strings 30-50 more (1M leases: 110 MB, now 48).
type Sorted struct {
	rows []packedLease
	strs []string // lease ids and reasons
}

// packedLease is a schema.Lease with its strings as indexes in
// Sorted.strs, its fields ordered to leave no padding.
type packedLease struct {
	hash           schema.Hash
	attempt        int32
	until, planned int64
	id, reason     uint32
}

// maxInterned bounds the strings ReadSorted looks up in a map to share
// them: past it, each new one is added to the table as it is (a table
// whose every lease has an id of its own would fill a map for nothing).
const maxInterned = 4096

// ReadSorted reads the lease table of snapshot m a batch at a time; of a
// hash's rows it keeps the one Read keeps (supersedes).
func ReadSorted(d *dataset.Dataset, m *dataset.Manifest) (Sorted, error) {
	t := m.Table(dataset.TableLeases)
	var s Sorted
	s.rows = make([]packedLease, 0, t.Rows())
	ids := map[string]uint32{}
	intern := func(str string) uint32 {
		if k, ok := ids[str]; ok {
			return k
		}
		k := uint32(len(s.strs))
		s.strs = append(s.strs, str)
		if len(ids) < maxInterned {
			ids[str] = k
		}
		return k
	}
	err := dataset.EachSourcePartitionBatch(d, t, "", func(rows []schema.Lease) error { // merge rewrites them
		for _, l := range rows {
			s.rows = append(s.rows, packedLease{hash: l.InfoHash, attempt: l.Attempt, until: l.LeaseUntil,
				planned: l.PlannedAt, id: intern(l.LeaseID), reason: intern(l.Reason)})
		}
		return nil
	})
	if err != nil {
		return Sorted{}, fmt.Errorf("leases: %w", err)
	}
	byHash := func(a, b packedLease) int { return bytes.Compare(a.hash[:], b.hash[:]) }
	if slices.IsSortedFunc(s.rows, byHash) && !hasDuplicates(s.rows) {
		return s, nil // as Write writes it
	}
	slices.SortStableFunc(s.rows, byHash) // a hash's rows stay in the order read
	out := s.rows[:0]
	for i := 0; i < len(s.rows); {
		keep := i
		j := i + 1
		for ; j < len(s.rows) && s.rows[j].hash == s.rows[i].hash; j++ {
			if supersedes(s.lease(&s.rows[j]), s.lease(&s.rows[keep])) {
				keep = j
			}
		}
		out = append(out, s.rows[keep])
		i = j
	}
	s.rows = slices.Clip(out)
	return s, nil
}

// hasDuplicates reports whether rows, sorted by hash, hold a hash twice.
func hasDuplicates(rows []packedLease) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].hash == rows[i-1].hash {
			return true
		}
	}
	return false
}

// lease returns p as a schema.Lease.
func (s Sorted) lease(p *packedLease) schema.Lease {
	return schema.Lease{InfoHash: p.hash, LeaseID: s.strs[p.id], LeaseUntil: p.until, Attempt: p.attempt,
		Reason: s.strs[p.reason], PlannedAt: p.planned}
}

// find returns the row of h, or nil.
func (s Sorted) find(h schema.Hash) *packedLease {
	i, ok := slices.BinarySearchFunc(s.rows, h, func(p packedLease, h schema.Hash) int { return schema.CompareHash(p.hash, h) })
	if !ok {
		return nil
	}
	return &s.rows[i]
}

// Len is how many leases s holds.
func (s Sorted) Len() int { return len(s.rows) }

// All yields the leases of s in hash order.
func (s Sorted) All() iter.Seq[schema.Lease] {
	return func(yield func(schema.Lease) bool) {
		for i := range s.rows {
			if !yield(s.lease(&s.rows[i])) {
				return
			}
		}
	}
}

// Get returns h's lease.
func (s Sorted) Get(h schema.Hash) (schema.Lease, bool) {
	p := s.find(h)
	if p == nil {
		return schema.Lease{}, false
	}
	return s.lease(p), true
}

// Live reports whether h is leased at now.
func (s Sorted) Live(h schema.Hash, now int64) bool {
	p := s.find(h)
	return p != nil && p.until > now
}

// HoldsIDs reports, for each of ids, whether a lease of s has it as its
// lease_id (merge tells so results planned by another dataset). It reads
// each lease once, and compares each distinct string of s at most once.
func (s Sorted) HoldsIDs(ids []string) []bool {
	held := make([]bool, len(ids))
	if len(ids) == 0 {
		return held
	}
	seen := make([]bool, len(s.strs)) // strs already compared
	for i := range s.rows {
		k := s.rows[i].id
		if seen[k] {
			continue
		}
		seen[k] = true
		for j, id := range ids {
			if s.strs[k] == id {
				held[j] = true
			}
		}
	}
	return held
}

// Expired counts the leases that ended more than Grace before now: those
// Write drops.
func (s Sorted) Expired(now int64) int {
	n := 0
	for i := range s.rows {
		if Expired(s.lease(&s.rows[i]), now) {
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
		for l := range s.All() {
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
