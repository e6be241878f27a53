package dedup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// competeOnce commits, as another writer that does not wait for the
// lock, a new partition 0xf0+n of one row to the dataset at dir.
func competeOnce(dir string, n int) error {
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		return err
	}
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	h := schema.Hash{byte(0xf0 + n), 0xee}
	key := fmt.Sprintf("%02x", h[0])
	fi, err := dataset.WriteStaged(tx, dataset.TableState, key, []schema.State{{InfoHash: h, HashType: schema.HashV1,
		MetadataStatus: schema.StatusNew, Tier: schema.TierHot}})
	if err != nil {
		tx.Abort()
		return err
	}
	tx.SetPartition(dataset.TableState, key, []dataset.FileInfo{fi})
	_, err = tx.Commit(context.Background(), dataset.CommitOptions{Writer: "competitor"})
	return err
}

// TestLockWaitOutlastsRacingWriters: a dedup that another writer beats
// to the commit at every try it lets it commits all the same with
// --lock-wait (from its HoldLockAfter-th try on it holds the lock, and
// the other writer is locked out), and exits 75 after MaxReapply lost
// races without.
func TestLockWaitOutlastsRacingWriters(t *testing.T) {
	obs := genObs(7, 300, 100)
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
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			in := writeObs(t, dir, obs)
			tries, locked := 0, 0
			st, err := run(t, data, func(o *Options) {
				o.LockWait = tt.wait
				o.BindPolicy = func(_ *Options, _ *dataset.Tx) error { // as each try begins
					tries++
					err := competeOnce(data, tries-1)
					if errors.Is(err, dataset.ErrLocked) {
						locked++
						return nil
					}
					return err
				}
			}, in)
			if tries != tt.tries || locked != tt.locked {
				t.Errorf("%d tries, the other writer locked out %d times; want %d and %d", tries, locked, tt.tries, tt.locked)
			}
			competed := readState(t, data)
			if tt.wait == 0 {
				if exitcode.Of(err) != exitcode.Locked || st.Commits != 0 {
					t.Fatalf("dedup = %d commits, %v (exit %d); want exit %d and none", st.Commits, err, exitcode.Of(err), exitcode.Locked)
				}
				if len(competed) != tries {
					t.Fatalf("state has %d hashes, want the other writer's %d", len(competed), tries)
				}
				return
			}
			if err != nil {
				t.Fatalf("dedup --lock-wait: %v", err)
			}
			if st.CommitConflicts != dataset.HoldLockAfter {
				t.Errorf("%d conflicts, want %d", st.CommitConflicts, dataset.HoldLockAfter)
			}
			want := truth(obs)
			for h, s := range competed {
				if h[1] == 0xee && h[0] >= 0xf0 {
					want[h] = s
				}
			}
			compare(t, competed, want)
		})
	}
}
