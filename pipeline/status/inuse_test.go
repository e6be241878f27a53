package status

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
)

// TestStatusKeepsANewDatasetFromCleanUp: while status reads a new
// dataset, the clean-up of the failing first writer that created it
// (dataset.RemoveUnused) leaves it, as it does for a writer that has it
// open, and status reports it whole; once status is done, the folder is
// no longer in use and the clean-up removes it. Status used to take no
// lock and could see the dataset vanish under it.
func TestStatusKeepsANewDatasetFromCleanUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	w, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	var kept string
	testSnapshotRead = func(int64) {
		if kept, err = dataset.RemoveUnused(dir, nil); err != nil {
			t.Error(err)
		}
	}
	defer func() { testSnapshotRead = nil }()
	r, err := Run(context.Background(), dir, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{Verify: true})
	if err != nil || r.Snapshot != 0 {
		t.Fatalf("status of a new dataset being cleaned up: %v, %v", r, err)
	}
	if kept != "another run has it open" {
		t.Fatalf("the clean-up under status kept %q; want it kept for status", kept)
	}
	datasettest.NotInUse(t, dir)
	if kept, err := dataset.RemoveUnused(dir, nil); kept != "" || err != nil {
		t.Fatalf("after status: kept %q, err %v; want it removed", kept, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind (stat: %v)", dir, err)
	}
}
