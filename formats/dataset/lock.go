package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// Lock is the dataset's writer lock: flock(2) on DIR/LOCK. The kernel
// drops it when the holder dies, so a kill -9 never leaves a stale lock;
// the file's text (host, PID, start time) is for people.
type Lock struct{ f *os.File }

// ErrLocked is returned when another writer holds the lock.
var ErrLocked = exitcode.ErrLocked

// LockWriter takes dir's writer lock for a change made outside a snapshot
// (policy set writes DIR/policy.json), so that it does not run while a
// commit does. It waits up to wait (0: fail at once) and then fails with
// ErrLocked, as Commit does. Release the lock when done.
func LockWriter(ctx context.Context, dir string, wait time.Duration) (*Lock, error) {
	return acquireLock(ctx, dir, wait)
}

// acquireLock takes the lock, waiting up to wait (0: fail at once), and
// no longer than what is left of the run's budget when ctx carries one
// (WithLockWait), which it then spends. A writer that waits says so
// (lockWaiter).
func acquireLock(ctx context.Context, dir string, wait time.Duration) (*Lock, error) {
	return lockAs(ctx, dir, wait, false)
}

// tryLock takes dir's lock if it is free at once, for work that any
// writer does when it can (maintain, removeUnused): its ErrLocked, which
// no one reads, names the holder without looking again at a LOCK file
// that names no one, as a refusal does (lockOnce).
func tryLock(dir string) (*Lock, error) {
	return lockAs(context.Background(), dir, 0, true)
}

// lockAs is acquireLock, or tryLock when try is set.
func lockAs(ctx context.Context, dir string, wait time.Duration, try bool) (*Lock, error) {
	b := budgetOf(ctx)
	start := time.Now()
	defer func() { b.spend(time.Since(start)) }()
	bounded := b.bound(wait)
	deadline := start.Add(bounded)
	w := &lockWaiter{dir: dir, wait: bounded, total: wait, try: try}
	for try := 1; ; try++ {
		l, moved, err := lockOnce(ctx, dir, deadline, w)
		if !moved {
			if err == nil {
				w.took()
			}
			return l, err
		}
		if try == relocks {
			return nil, fmt.Errorf("dataset: %s: LOCK was replaced %d times while being locked", dir, relocks)
		}
	}
}

// relocks bounds how often acquireLock opens DIR/LOCK anew after finding
// that the file it locked was no longer DIR/LOCK.
const relocks = 10

// lockOpened, if set (by tests), runs between the opening of DIR/LOCK
// and its flock.
var lockOpened func(path string)

// lockUnnamed, if set (by tests), runs when a writer past its wait first
// finds the LOCK file at path naming no holder.
var lockUnnamed func(path string)

// refusedBy is what an ErrLocked says holds the lock: the LOCK file's
// holder, or, where that names none after unnamedPolls looks, a process
// that wrote no name there (flock(1), say; or a writer that had not yet
// written its line).
func refusedBy(holder string) string {
	if holder == unnamedHolder {
		return unnamedHolder + ", which has written no name into LOCK"
	}
	return holder
}

// openLockFile opens DIR/LOCK, making it if it is missing, and only a
// regular file (fsutil.OpenRegular: a directory, FIFO, link or device
// there is refused, even one put there an instant before the open). A
// variable for tests: to fail the making, as a file system out of space
// or inodes does, or to put something else at LOCK just before the open.
var openLockFile = func(path string) (*os.File, error) {
	return fsutil.OpenRegular(path, os.O_RDWR|os.O_CREATE, 0o666)
}

// lockOnce opens DIR/LOCK and flocks it, waiting until deadline. A flock
// on a LOCK file that was removed in the meantime (by a run that removed
// the dataset it created, see RemoveUnused), perhaps re-created, locks
// nothing anyone else locks: then moved is set, and the caller opens
// DIR/LOCK again.
func lockOnce(ctx context.Context, dir string, deadline time.Time, w *lockWaiter) (l *Lock, moved bool, err error) {
	path := filepath.Join(dir, "LOCK")
	// Only a regular file (or nothing) is a lock: a directory fails open(2),
	// a FIFO takes the holder's line and blocks the next writer's read of
	// it for good, a link or device locks something else.
	f, err := openLockFile(path)
	var nr *fsutil.NotRegularError
	if errors.As(err, &nr) {
		return nil, false, fmt.Errorf("dataset: %w", err)
	} else if err != nil {
		return nil, false, fmt.Errorf("dataset: %s: %w", path, err)
	}
	if lockOpened != nil {
		lockOpened(path)
	}
	unnamed := 0 // polls past deadline that found LOCK naming no holder
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, false, fmt.Errorf("dataset: %s: flock: %w", path, err)
		}
		if time.Now().After(deadline) {
			// A LOCK naming no one is most often a moment between two
			// writers (lockWaiter): look again, up to unnamedPolls
			// polls, before saying so, as the waiter's line does.
			holder := holderOf(path)
			if holder != unnamedHolder || unnamed == unnamedPolls || w.try {
				f.Close()
				return nil, false, fmt.Errorf("dataset: %s: %w (held by %s)", dir, ErrLocked, refusedBy(holder))
			}
			if unnamed == 0 && lockUnnamed != nil {
				lockUnnamed(path)
			}
			unnamed++
		} else {
			w.waiting(path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !samePath(f, path) {
		f.Close()
		return nil, true, nil
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	fmt.Fprintf(f, "host=%s pid=%d since=%s\n", host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return &Lock{f: f}, false, nil
}

// samePath reports whether the open file f is still the file at path
// (same device and inode): not removed, nor replaced, since it was opened.
func samePath(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, pi)
}

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
