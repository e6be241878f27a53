package plan

import (
	"fmt"
	"log/slog"
	"time"

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
}

// readReplaced reads the jobs file at output, if there is one. A file
// that is not a jobs file (or cannot be read) holds no leases: it is
// replaced as before.
func readReplaced(output string) *replaced {
	r := &replaced{path: output}
	if output == "-" {
		return r
	}
	r.leases.read(output)
	return r
}

// live returns how many of the file's jobs the dataset's leases still
// hold live at now, the latest lease_until among them, and their lease
// IDs.
func (r *replaced) live(ls leases.Set, now int64) (n int, until int64, ids []string) {
	for _, j := range r.leases.rows {
		l, ok := ls[j.hash]
		if !ok || !r.leases.holds(j, l, now) {
			continue
		}
		n++
		until = max(until, l.LeaseUntil)
		if id := r.leases.ids[j.id]; len(ids) == 0 || ids[len(ids)-1] != id {
			ids = append(ids, id)
		}
	}
	return n, until, ids
}

// check refuses to replace a file whose jobs are still leased unless
// replace; with replace it ends their leases in ls and returns how many.
func (r *replaced) check(ls leases.Set, now int64, replace bool) (int, error) {
	n, until, ids := r.live(ls, now)
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
