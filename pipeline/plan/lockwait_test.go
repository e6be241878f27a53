package plan

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// commitEmpty commits a snapshot that changes nothing, as another writer
// that does not wait for the lock.
func commitEmpty(dir string) error {
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		return err
	}
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	_, err = tx.Commit(context.Background(), dataset.CommitOptions{Writer: "competitor"})
	return err
}

// TestLockWaitPlanOutlastsRacingWriters: a plan-retries that another
// writer beats to the commit at every try it lets it (the jobs file is
// opened between the plan's Begin and its commit) commits its leases all
// the same with --lock-wait, and exits 75 after MaxReapply lost races
// without.
func TestLockWaitPlanOutlastsRacingWriters(t *testing.T) {
	tests := []struct {
		name          string
		wait          time.Duration
		tries, locked int
	}{
		{"with --lock-wait", time.Minute, dataset.HoldLockAfter + 1, 1},
		{"without --lock-wait", 0, dataset.MaxReapply + 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tenNew(t)
			o := planOptions(t, dir)
			o.LockWait = tt.wait
			tries, locked := 0, 0
			o.OpenOutput = func(path string) (*fsutil.File, error) {
				tries++
				if err := commitEmpty(dir); errors.Is(err, dataset.ErrLocked) {
					locked++
				} else if err != nil {
					return nil, err
				}
				return fsutil.CreateOutput(path)
			}
			st, err := Run(context.Background(), o)
			if tries != tt.tries || locked != tt.locked {
				t.Errorf("%d tries, the other writer locked out %d times; want %d and %d", tries, locked, tt.tries, tt.locked)
			}
			leases, _ := leasesAt(t, dir)
			if tt.wait == 0 {
				if exitcode.Of(err) != exitcode.Locked || len(leases) != 0 {
					t.Fatalf("plan-retries = %v (exit %d) with %d leases; want exit %d and none", err, exitcode.Of(err), len(leases), exitcode.Locked)
				}
				return
			}
			if err != nil {
				t.Fatalf("plan-retries --lock-wait: %v", err)
			}
			if st.CommitConflicts != dataset.HoldLockAfter || len(leases) != 10 || len(readJobs(t, o.Output)) != 10 {
				t.Fatalf("%d conflicts, %d leases, %d jobs; want %d, 10 and 10", st.CommitConflicts, len(leases), len(readJobs(t, o.Output)), dataset.HoldLockAfter)
			}
		})
	}
}
