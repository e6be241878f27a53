package plan

import (
	"errors"
	"io"

	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// fileLeases are the leases that the jobs of jobs files hold (their
// jobLease columns), kept for the whole run (unpublished, replaced). They
// are held compactly, 32 bytes a job and each lease ID once: as rows of
// jobLease, a jobs file of 1M jobs at -o took about 70 MB (48 bytes a
// row and a lease_id string of its own each), live through planning.
type fileLeases struct {
	ids  []string // the lease IDs, once each, in the order met
	rows []fileLease
	idx  map[string]int32 // of ids
}

// fileLease is one job's lease.
type fileLease struct {
	hash  schema.Hash
	id    int32 // in ids
	until int64
}

// read adds the leases of the jobs file at path and reports whether it
// could read them all: a file it cannot read (not a jobs file, cut
// short) adds none.
func (f *fileLeases) read(path string) bool {
	r, err := rowio.Open[jobLease](path, nil)
	if err != nil {
		return false
	}
	defer r.Close()
	nIDs, nRows := len(f.ids), len(f.rows)
	buf := make([]jobLease, 1024)
	for {
		n, err := r.Read(buf)
		for _, j := range buf[:n] {
			f.add(j)
		}
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			for _, id := range f.ids[nIDs:] {
				delete(f.idx, id)
			}
			f.ids, f.rows = f.ids[:nIDs], f.rows[:nRows]
			return false
		}
	}
}

// add adds the lease of j.
func (f *fileLeases) add(j jobLease) {
	id, ok := f.idx[j.LeaseID]
	if !ok {
		if f.idx == nil {
			f.idx = map[string]int32{}
		}
		id = int32(len(f.ids))
		f.ids = append(f.ids, j.LeaseID)
		f.idx[j.LeaseID] = id
	}
	f.rows = append(f.rows, fileLease{hash: j.InfoHash, id: id, until: j.LeaseUntil})
}

// holds reports whether l is the lease of row r, live at now.
func (f *fileLeases) holds(r fileLease, l schema.Lease, now int64) bool {
	return l.LeaseID == f.ids[r.id] && l.LeaseUntil == r.until && l.LeaseUntil > now
}

// dropLeases removes from leases every lease one of f's jobs holds (the
// same hash, lease_id and lease_until), live at now or not, and returns
// how many it removed and the hashes of those whose reason was cold.
func dropLeases(f *fileLeases, leases leases.Set) (int, []schema.Hash) {
	n, cold := 0, []schema.Hash(nil)
	for _, r := range f.rows {
		if l, ok := leases[r.hash]; ok && l.LeaseID == f.ids[r.id] && l.LeaseUntil == r.until {
			if l.Reason == schema.ReasonCold {
				cold = append(cold, r.hash)
			}
			delete(leases, r.hash)
			n++
		}
	}
	return n, cold
}

// endLeases ends at now, in leases, every lease one of f's jobs holds
// (the same hash, lease_id and lease_until) that is live at now, and
// returns how many it ended.
func endLeases(f *fileLeases, leases leases.Set, now int64) int {
	n := 0
	for _, r := range f.rows {
		if l, ok := leases[r.hash]; ok && f.holds(r, l, now) {
			l.LeaseUntil = now
			leases[r.hash] = l
			n++
		}
	}
	return n
}
