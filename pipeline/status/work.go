package status

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// workFiles are the files scripts/cron/crawl-pass.sh keeps in each pass's
// folder DIR/work/PASS/ for dedup (observations) and merge (results) to
// apply, with the stage that applies each: Arrow IPC streams (capture's
// and fetch's -o -, which a kill -9 leaves readable up to its last whole
// batch), and the Parquet files of passes before them.
var workFiles = []struct{ name, stage string }{
	{"observations.parquet", "dedup"},
	{"observations.arrows", "dedup"},
	{"results.parquet", "merge"},
	{"results.arrows", "merge"},
}

// listWork lists the work files of crawl-pass under DIR/work/*/ that are
// not marked applied (no FILE.applied beside them), passes in name order
// (crawl-pass applies them in the order the passes made them, by their
// .pass.seq: the list is the same set, perhaps in another order): what a
// pass that stopped or failed left for the next one, or the file of a pass
// running now between its capture (or fetch) and its dedup (or merge).
// Then DIR/work/jobs.parquet, if its leases are live: jobs planned and
// leased, not yet fetched. It reads, as crawl-pass's glob does, the
// folders whose names do not start with a dot, and follows symbolic links.
func (r *Report) listWork() {
	work := filepath.Join(r.Dir, "work")
	entries, err := os.ReadDir(work)
	if err != nil { // no DIR/work: not run by crawl-pass
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		pass := filepath.Join(work, e.Name())
		if fi, err := os.Stat(pass); err != nil || !fi.IsDir() {
			continue
		}
		for _, w := range workFiles {
			p := filepath.Join(pass, w.name)
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if _, err := os.Stat(p + ".applied"); err == nil {
				continue
			}
			r.UnappliedWork = append(r.UnappliedWork, p)
		}
	}
	if r.jobsWaiting(work) {
		r.UnappliedWork = append(r.UnappliedWork, filepath.Join(work, jobsFile))
	}
}

// jobsFile is the jobs file crawl-pass keeps at DIR/work/jobs.parquet
// between passes: one a pass published and did not move into its folder,
// or whose fetch found DIR/dht-state locked and put back unread. The next
// pass fetches it, then merges the results, in place of a new plan.
const jobsFile = "jobs.parquet"

// jobsWaiting reports whether DIR/work/jobs.parquet is work waiting: its
// leases are live (jobs.parquet.lease_until, which crawl-pass writes
// beside it, is after r.Now). One whose leases have ended, or without
// that record, the next pass drops or plans over: those hashes are
// planned again, so they are not counted twice.
func (r *Report) jobsWaiting(work string) bool {
	p := filepath.Join(work, jobsFile)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, err := os.ReadFile(p + ".lease_until")
	if err != nil {
		return false
	}
	until, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return err == nil && until.After(r.Now)
}

// workStage is the stage that applies the crawl-pass work file at path.
func workStage(path string) string {
	if filepath.Base(path) == jobsFile {
		return "fetch, then merge,"
	}
	for _, w := range workFiles {
		if filepath.Base(path) == w.name {
			return w.stage
		}
	}
	return "dedup"
}
