package plan

import (
	"bytes"
	"iter"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
)

// planned is the lease table a pass commits: the leases it read (some
// ended or pruned) and one for each of its jobs. The jobs' leases are
// not added to the table read (that grew its map by over 200 bytes a job
// at --limit 1M): they are made from the jobs' candidates, taken in hash
// order, as the table is written (leases.WriteMerged).
type planned struct {
	old    leases.Set
	jobs   *jobList
	byHash []int32 // the jobs' candidates (jobList.at), in hash order
	at     int64   // planned_at of the jobs' leases
}

// newPlanned returns the lease table of old and of jobs planned at at.
// The jobs are sorted from the jobs file's order, as they were when they
// were held as a slice of jobs (a hash is planned once: any order sorts
// alike).
func newPlanned(old leases.Set, jobs *jobList, at int64) planned {
	byHash := make([]int32, 0, jobs.Len())
	for g := range byShare(jobs.lists) {
		byHash = append(byHash, g)
	}
	slices.SortFunc(byHash, func(a, b int32) int { return bytes.Compare(jobs.at(a).hash[:], jobs.at(b).hash[:]) })
	return planned{old: old, jobs: jobs, byHash: byHash, at: at}
}

// added yields the jobs' leases in hash order.
func (p planned) added() iter.Seq[schema.Lease] {
	return func(yield func(schema.Lease) bool) {
		for _, g := range p.byHash {
			c := p.jobs.at(g)
			l := schema.Lease{InfoHash: c.hash, LeaseID: p.jobs.id, LeaseUntil: p.jobs.until, Attempt: c.attempt,
				Reason: reasonNames[c.reason], PlannedAt: p.at}
			if !yield(l) {
				return
			}
		}
	}
}

// len is how many leases the table holds.
func (p planned) len() int {
	n := len(p.old)
	for _, g := range p.byHash {
		if _, ok := p.old[p.jobs.at(g).hash]; !ok {
			n++
		}
	}
	return n
}

// write stages the table as tx's lease table.
func (p planned) write(tx *dataset.Tx) error { return leases.WriteMerged(tx, p.old, p.added()) }
