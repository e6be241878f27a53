package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// onLockOpened sets lockOpened to run f once, on the next opening of a
// LOCK file, for the rest of the test.
func onLockOpened(t *testing.T, f func(path string)) {
	t.Helper()
	done := false
	lockOpened = func(path string) {
		if !done {
			done = true
			f(path)
		}
	}
	t.Cleanup(func() { lockOpened = nil })
}

// TestLockFileReplaced: a writer that opened DIR/LOCK, which was then
// removed (and perhaps made anew) before its flock, locks the file that
// DIR/LOCK now is, not the removed one: it fails with ErrLocked while
// another holds that one.
func TestLockFileReplaced(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		remake  bool // another writer makes DIR/LOCK anew and holds it
		wantErr error
	}{
		{"removed", false, nil},
		{"removed and held anew by another", true, ErrLocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			onLockOpened(t, func(path string) {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if !tc.remake {
					return
				}
				f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
					t.Fatal(err)
				}
			})
			l, err := acquireLock(ctx, dir, 0)
			if !errors.Is(err, tc.wantErr) {
				l.Release()
				t.Fatalf("acquireLock: %v; want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			defer l.Release()
			if !samePath(l.f, filepath.Join(dir, "LOCK")) {
				t.Fatal("the lock held is not on DIR/LOCK")
			}
		})
	}
}
