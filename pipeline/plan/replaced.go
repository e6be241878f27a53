package plan

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
)

// replaced is the jobs file at -o FILE that a run would replace: one an
// earlier run published there. While the dataset holds its jobs' leases
// (the same hash, lease_id and lease_until, live at now) no fetch and
// merge has taken them yet, and a run that wrote over it would leave
// those hashes leased to no one until lease_until. So a run refuses to
// (exit 2) unless told to replace it (Options.Replace): then it ends
// those leases in its commit, and their hashes are due again at once.
// Ending them is safe only if no fetch is reading the file: one that is
// fetches jobs whose leases are gone, whose failures merge ignores and
// whose metadata it stores late, so the hashes may be fetched twice.
type replaced struct {
	path   string
	leases fileLeases // of its jobs
	// writing are the jobs of the files another run is writing to path
	// (their temporary names, held: fsutil.HeldTemps). The leases of a
	// run that committed are in the base snapshot before its file has
	// its name; one that has not committed holds none there yet.
	writing fileLeases
}

// readReplaced reads the jobs file at output, if there is one, and those
// that other runs are writing to it (but for the files of u, which this
// run claimed). A file that is not a jobs file (or cannot be read, as one
// still being written) holds no leases: it is replaced as before. Each
// try reads them again: another run to the same output may have
// committed, or published its file, since the last.
func readReplaced(output string, u *unpublished) *replaced {
	r := &replaced{path: output}
	if output == "-" {
		return r
	}
	r.leases.read(output)
	for _, p := range fsutil.HeldTemps(output) {
		if !slices.ContainsFunc(u.files, func(f *fsutil.DeadTemp) bool { return f.Name == p }) {
			r.writing.read(p)
		}
	}
	return r
}

// live returns how many of the jobs of f the dataset's leases still hold
// live at now, the latest lease_until among them, and their lease IDs.
func live(f *fileLeases, ls leases.Set, now int64) (n int, until int64, ids []string) {
	for _, j := range f.rows {
		l, ok := ls[j.hash]
		if !ok || !f.holds(j, l, now) {
			continue
		}
		n++
		until = max(until, l.LeaseUntil)
		if id := f.ids[j.id]; len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return n, until, ids
}

// check refuses to replace a file whose jobs are still leased unless
// replace; with replace it ends their leases in ls and returns how many.
// It refuses, whatever replace, while another run that committed its
// leases is writing its jobs file to the same path: of the two files
// renamed there, the first would be lost, its jobs leased to no one.
func (r *replaced) check(ls leases.Set, now int64, replace bool) (int, error) {
	if n, until, ids := live(&r.writing, ls, now); n > 0 {
		return 0, exitcode.BadInput(fmt.Errorf(
			"plan-retries: %s: another plan-retries is writing it, with %s it leased until %s (lease %s): run one plan-retries per -o FILE at a time (nothing leased)",
			r.path, plural.Count(n, "job", "jobs"), time.UnixMilli(until).UTC().Format(time.RFC3339), ids[0]))
	}
	n, until, ids := live(&r.leases, ls, now)
	if n == 0 {
		return 0, nil
	}
	if !replace {
		return 0, exitcode.BadInput(fmt.Errorf(
			"plan-retries: %s holds %s still leased until %s (lease %s), not yet fetched and merged: fetch it and merge the results first, or give --replace to end those leases (only if no fetch is reading it)",
			r.path, plural.Count(n, "job", "jobs"), time.UnixMilli(until).UTC().Format(time.RFC3339), ids[0]))
	}
	return endLeases(&r.leases, ls, now), nil
}

// note says, once the commit that ended them is made, how many leases of
// the replaced file it ended.
func (r *replaced) note(ended int) {
	if ended > 0 {
		slog.Warn("plan-retries: "+r.path+": --replace: the jobs file it replaces held live leases; they are ended and their hashes due again",
			"leases_ended", ended)
	}
}
