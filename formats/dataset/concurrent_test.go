package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestConcurrentCommitsKeepOne: writers committing at once with --keep 1
// (each collecting old snapshots after it lets go of the lock, while
// others publish) lose no commit, and never remove a directory that a kept
// manifest names: the current one above all.
func TestConcurrentCommitsKeepOne(t *testing.T) {
	d := openNew(t)
	const writers, commits = 3, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range commits {
				key := fmt.Sprintf("%02x", w*commits+i)
				for {
					err := commitOne(d, key)
					if errors.Is(err, ErrConflict) {
						continue // re-apply on the new base, as the stages do
					}
					if err != nil {
						errs <- fmt.Errorf("writer %d, partition %s: %w", w, key, err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	if m.Snapshot != writers*commits || len(m.Table(TableState).PartitionKeys()) != writers*commits {
		t.Fatalf("snapshot %d with %d partitions, want %d of each", m.Snapshot, len(m.Table(TableState).PartitionKeys()), writers*commits)
	}
	if n := globRows(t, d); n != writers*commits {
		t.Fatalf("glob sees %d rows, want %d", n, writers*commits)
	}
	ms, _ := os.ReadDir(d.Path("manifests"))
	for _, e := range ms {
		km, err := readManifest(d.Path("manifests", e.Name()))
		if err != nil {
			t.Fatalf("kept manifest %s: %v", e.Name(), err)
		}
		for name, tb := range km.Tables {
			for key, files := range tb.Partitions {
				for _, f := range files {
					if _, err := os.Stat(d.FilePath(tb, key, f)); err != nil {
						t.Errorf("manifest %s, table %s: %v", e.Name(), name, err)
					}
				}
			}
		}
	}
}

// commitOne commits a partition of one row.
func commitOne(d *Dataset, key string) error {
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	var h schema.Hash
	fmt.Sscanf(key, "%02x", &h[0])
	info, err := WriteStaged(tx, TableState, key, []schema.State{{InfoHash: h, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		tx.Abort()
		return err
	}
	tx.SetPartition(TableState, key, []FileInfo{info})
	_, err = tx.Commit(context.Background(), CommitOptions{Keep: 1, LockWait: 30 * time.Second, Writer: "test"})
	return err
}
