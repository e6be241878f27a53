package dataset

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// commitKey commits a partition of one row, waiting up to wait for the
// lock.
func commitKey(d *Dataset, key string, wait time.Duration) error {
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
	_, err = tx.Commit(context.Background(), CommitOptions{LockWait: wait, Writer: "competitor"})
	return err
}

// raceEveryTry runs a writer of partition 00 as the stages do (a loop
// of BeginAttempt, work, Commit and Reapply) while a competitor commits,
// without waiting for the lock, between the writer's Begin and Commit at
// every try it can: it returns the writer's tries, how many times the
// competitor found the lock held, and the writer's error.
func raceEveryTry(d *Dataset, wait time.Duration) (tries, lockedOut int, err error) {
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		tries++
		tx, err := d.BeginAttempt(ctx, attempt, wait)
		if err != nil {
			return tries, lockedOut, err
		}
		if cerr := commitKey(d, fmt.Sprintf("%02x", 0x80+attempt), 0); errors.Is(cerr, ErrLocked) {
			lockedOut++
		} else if cerr != nil {
			tx.Abort()
			return tries, lockedOut, fmt.Errorf("competitor: %w", cerr)
		}
		info, err := WriteStaged(tx, TableState, "00", []schema.State{{HashType: 1, MetadataStatus: "new", Tier: "hot"}})
		if err != nil {
			tx.Abort()
			return tries, lockedOut, err
		}
		tx.SetPartition(TableState, "00", []FileInfo{info})
		_, err = tx.Commit(ctx, CommitOptions{LockWait: wait, Writer: "writer"})
		if retry, err := Reapply(err, attempt); !retry {
			return tries, lockedOut, err
		}
	}
}

// TestLockWaitWriterAlwaysRaced: a writer that loses the race to commit
// at every try it lets another writer commit in commits all the same if
// it may wait for the lock (it holds the lock through its try after
// HoldLockAfter lost races), and gives up with the locked error after
// MaxReapply lost races if it may not.
func TestLockWaitWriterAlwaysRaced(t *testing.T) {
	tests := []struct {
		name          string
		wait          time.Duration
		tries, locked int
		committed     bool
	}{
		{"with a lock wait", time.Minute, HoldLockAfter + 1, 1, true},
		{"without a lock wait", 0, MaxReapply + 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tries, locked, err := raceEveryTry(d, tt.wait)
			if tt.committed && err != nil {
				t.Fatalf("writer failed after %d tries: %v", tries, err)
			}
			if !tt.committed && !(errors.Is(err, ErrLocked) && errors.Is(err, ErrConflict)) {
				t.Fatalf("writer returned %v after %d tries, want the locked error of a lost race", err, tries)
			}
			if tries != tt.tries || locked != tt.locked {
				t.Errorf("%d tries, competitor locked out %d times; want %d and %d", tries, locked, tt.tries, tt.locked)
			}
			m, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.Table(TableState).Partitions["00"]; ok != tt.committed {
				t.Errorf("writer's partition committed: %v, want %v", ok, tt.committed)
			}
			if n := int64(tries - locked + btoi(tt.committed)); m.Snapshot != n {
				t.Errorf("snapshot %d, want %d (the competitor's commits and the writer's)", m.Snapshot, n)
			}
			l, err := LockWriter(context.Background(), d.Dir, 0)
			if err != nil {
				t.Fatalf("the lock is still held after the writer returned: %v", err)
			}
			l.Release()
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestHeldLock: a transaction that holds the lock from BeginAttempt
// keeps other writers out, not readers nor Open; its Commit does not take
// the lock again (flock on a second descriptor would wait for the first:
// with no wait it would fail at once), and Commit, Abort and a wait cut
// short by the context all leave the lock free.
func TestHeldLock(t *testing.T) {
	ctx := context.Background()
	lockFree := func(t *testing.T, d *Dataset) {
		t.Helper()
		l, err := LockWriter(ctx, d.Dir, 0)
		if err != nil {
			t.Fatalf("lock not released: %v", err)
		}
		l.Release()
	}
	t.Run("commit", func(t *testing.T) {
		d := openNew(t)
		tx, err := d.BeginAttempt(ctx, HoldLockAfter, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := commitKey(d, "01", 0); !errors.Is(err, ErrLocked) {
			t.Fatalf("another writer's commit under the held lock: %v, want ErrLocked", err)
		}
		if _, err := Open(ctx, d.Dir, OpenOptions{}); err != nil {
			t.Fatalf("Open under the held lock: %v", err)
		}
		if _, err := OpenReadOnly(d.Dir); err != nil {
			t.Fatalf("a reader under the held lock: %v", err)
		}
		info, err := WriteStaged(tx, TableState, "00", []schema.State{{HashType: 1, MetadataStatus: "new", Tier: "hot"}})
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(TableState, "00", []FileInfo{info})
		m, err := tx.Commit(ctx, CommitOptions{LockWait: 0, Writer: "test"})
		if err != nil {
			t.Fatalf("Commit under the lock it holds: %v", err)
		}
		if m.Snapshot != 1 {
			t.Fatalf("snapshot %d, want 1", m.Snapshot)
		}
		lockFree(t, d)
	})
	t.Run("abort", func(t *testing.T) {
		d := openNew(t)
		tx, err := d.BeginAttempt(ctx, HoldLockAfter, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		tx.Abort()
		lockFree(t, d)
	})
	t.Run("interrupted wait", func(t *testing.T) {
		d := openNew(t)
		other, err := LockWriter(ctx, d.Dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := d.BeginAttempt(cctx, HoldLockAfter, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("BeginAttempt while another holds the lock, interrupted: %v, want context.Canceled", err)
		}
		other.Release()
		lockFree(t, d)
	})
	t.Run("early tries do not lock", func(t *testing.T) {
		d := openNew(t)
		tx, err := d.BeginAttempt(ctx, HoldLockAfter-1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Abort()
		lockFree(t, d)
	})
}
