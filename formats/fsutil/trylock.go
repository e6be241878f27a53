package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrHeld is what a HeldError is (errors.Is).
var ErrHeld = errors.New("held by another process")

// HeldError is TryLockDir's error when another process holds the lock:
// Holder is what that process wrote in the lock file ("pid N"), as
// ReadHolder shows it.
type HeldError struct{ Path, Holder string }

func (e *HeldError) Error() string {
	if e.Holder == "" { // between two holders, or one not yet named
		return fmt.Sprintf("%s: %v, which has written no name into it", e.Path, ErrHeld)
	}
	return fmt.Sprintf("%s: %v (%s)", e.Path, ErrHeld, e.Holder)
}

// Is makes a HeldError match ErrHeld.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ErrNotDir is returned by TryLockDir when dir is a file.
var ErrNotDir = errors.New("not a directory")

// TryLockDir takes the exclusive flock(2) on the file name in directory
// dir (both made if missing, the folder durably: MkdirAllSynced),
// without waiting, and writes "pid N" in it for people. The kernel drops
// the lock when the process dies, so a killed holder never leaves it
// behind. When another process holds it, the error is a *HeldError.
// release drops the lock.
func TryLockDir(dir, name string) (release func(), err error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotDir)
	}
	if err := MkdirAllSynced(dir, 0o777); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := ReadHolder(p)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &HeldError{Path: p, Holder: holder}
		}
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	// The line goes over the last holder's, then the rest is cut: the
	// file is never empty for a process refused meanwhile to read.
	line := fmt.Sprintf("pid %d\n", os.Getpid())
	if _, err := f.WriteAt([]byte(line), 0); err == nil {
		_ = f.Truncate(int64(len(line)))
	}
	return func() { f.Close() }, nil
}
