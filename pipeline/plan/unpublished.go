package plan

import (
	"log/slog"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
)

// jobLease is the lease a job of a jobs file holds.
type jobLease struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	LeaseID    string      `parquet:"lease_id"`
	LeaseUntil int64       `parquet:"lease_until,timestamp(millisecond)"`
}

// unpublished are the jobs files that killed runs to the same -o FILE
// left under their temporary names. A run writes its jobs file out whole
// before it commits the leases and renames it into place after: one
// killed in between leaves the leases committed and the jobs with no
// one, the hashes held from every planner until the leases end. The next
// run to that -o claims those files before it opens its own output
// (which would sweep them away), drops those leases from the table in its
// commit (release), so that their hashes are planned again at once, and
// removes the files once that commit is made (remove). They are dropped,
// not ended as a replaced file's are (replaced): nobody saw the file, so
// no fetch can be reading it, and an ended lease kept for its grace would
// be a record of a fetch that never was (status: an expired lease with
// no result merged) until its hash is planned again. A file of a run
// killed before its commit holds leases the dataset never had: it drops
// none. Only the files fsutil.CreateOutput created locked at birth (where
// the file system offers O_TMPFILE) are claimed: elsewhere a temporary
// file found unlocked may be a live writer's, and its leases wait for
// lease_until as before.
type unpublished struct {
	files  []*fsutil.DeadTemp
	leases fileLeases // of their jobs
}

// claimUnpublished claims and reads the jobs files that killed runs to
// output left (none for stdout, a FIFO or a device). A file that cannot
// be read (a run killed while writing it, before any commit) gives no
// jobs; it goes with the others.
func claimUnpublished(output string) *unpublished {
	u := &unpublished{}
	if output == "-" {
		return u
	}
	u.files = fsutil.ClaimDeadTemps(output)
	for _, f := range u.files {
		u.leases.read(f.Name)
	}
	return u
}

// release drops from leases every lease a job of the files holds (the
// same hash, lease_id and lease_until), live at now or expired, and
// returns how many it dropped: the hash is due again, and this pass may
// plan it under a lease of its own. It returns too the cold hashes among
// them, which this pass offers outside its cold window (lostCold).
func (u *unpublished) release(leases leases.Set) (int, lostCold) {
	n, cold := dropLeases(&u.leases, leases)
	return n, newLostCold(cold)
}

// remove removes the files, once the leases they hold are dropped in a
// commit (or the dataset held none of them), and says what it did.
func (u *unpublished) remove(output string, released int) {
	for _, f := range u.files {
		f.Remove()
	}
	if released > 0 {
		slog.Warn("plan-retries: "+output+": a killed run left its jobs file unpublished; its leases are dropped and its hashes due again",
			"leases_dropped", released, "lease_ids", u.leases.ids)
	}
	u.files = nil
}

// close lets go of the files still claimed, leaving them for the next
// run (this one failed, or its commit may yet be undone by a crash).
func (u *unpublished) close() {
	for _, f := range u.files {
		f.Release()
	}
	u.files = nil
}
