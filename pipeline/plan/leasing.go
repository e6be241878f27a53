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
// at --limit 1M): they are made from the jobs, taken in hash order, as
// the table is written (leases.WriteMerged).
type planned struct {
	old    leases.Set
	jobs   []schema.Job
	byHash []int32 // indexes of jobs, in hash order
	at     int64   // planned_at of the jobs' leases
}

// newPlanned returns the lease table of old and of jobs planned at at.
func newPlanned(old leases.Set, jobs []schema.Job, at int64) planned {
	byHash := make([]int32, len(jobs))
	for i := range byHash {
		byHash[i] = int32(i)
	}
	slices.SortFunc(byHash, func(a, b int32) int { return bytes.Compare(jobs[a].InfoHash[:], jobs[b].InfoHash[:]) })
	return planned{old: old, jobs: jobs, byHash: byHash, at: at}
}

// added yields the jobs' leases in hash order.
func (p planned) added() iter.Seq[schema.Lease] {
	return func(yield func(schema.Lease) bool) {
		for _, i := range p.byHash {
			j := &p.jobs[i]
			l := schema.Lease{InfoHash: j.InfoHash, LeaseID: j.LeaseID, LeaseUntil: j.LeaseUntil, Attempt: j.Attempt,
				Reason: j.Reason, PlannedAt: p.at}
			if !yield(l) {
				return
			}
		}
	}
}

// len is how many leases the table holds.
func (p planned) len() int {
	n := len(p.old)
	for i := range p.jobs {
		if _, ok := p.old[p.jobs[i].InfoHash]; !ok {
			n++
		}
	}
	return n
}

// write stages the table as tx's lease table.
func (p planned) write(tx *dataset.Tx) error { return leases.WriteMerged(tx, p.old, p.added()) }
