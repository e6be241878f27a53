package status

import (
	"os"
	"path/filepath"
	"strings"
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
// as crawl-pass applies them: what a pass that stopped or failed left for
// the next one, or the file of a pass running now between its capture
// (or fetch) and its dedup (or merge). It reads, as crawl-pass's glob
// does, the folders whose names do not start with a dot, and follows
// symbolic links.
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
}

// workStage is the stage that applies the crawl-pass work file at path.
func workStage(path string) string {
	for _, w := range workFiles {
		if filepath.Base(path) == w.name {
			return w.stage
		}
	}
	return "dedup"
}
