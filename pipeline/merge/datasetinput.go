package merge

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/internal/exitcode"
)

// notADataset refuses a RESULTS folder that is a dataset (its CURRENT
// file and manifests/, as dataset tells one): "merge --data B A" meant
// "merge --data B --from A", and read as a folder of results it failed on
// whichever table file came first, naming a leases or state file. A
// folder inside a dataset (crawl-pass's DIR/work/PASS/) is not one.
func notADataset(dir string) error {
	cur, err := os.Stat(filepath.Join(dir, "CURRENT"))
	if err != nil || !cur.Mode().IsRegular() {
		return nil
	}
	if m, err := os.Stat(filepath.Join(dir, "manifests")); err != nil || !m.IsDir() {
		return nil
	}
	return exitcode.BadInput(fmt.Errorf("merge: %s: a dataset, not fetch results: merge --from %s unions a dataset into --data (alone: no RESULTS)", dir, dir))
}
