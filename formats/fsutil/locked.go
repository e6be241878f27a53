package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CreateLocked is Create for a file that other processes may find under
// its temporary name and must leave alone while its writer lives (a
// spool that a cleaner salvages when its writer died). It also returns a
// second, read-only handle on the file that holds an exclusive flock(2);
// the kernel drops the lock when the process dies. The caller closes it.
//
// Where the system allows it, the file is created without a name
// (O_TMPFILE), locked, and only then linked under its temporary name, so
// that a temporary file found unlocked is always a dead writer's (or one
// that has just been committed): LockedAtBirth tells such names apart.
// Elsewhere the lock is taken just after the creation, and a cleaner must
// allow for that instant.
func CreateLocked(path string) (*File, *os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if unnamedFirst {
		if f, lk, err := createUnnamed(dir, base, path); err == nil {
			return f, lk, nil
		}
	}
	f, err := createUnheld(path)
	if err != nil {
		return nil, nil, err
	}
	lk, err := os.Open(f.Name())
	if err != nil {
		f.Abort()
		return nil, nil, err
	}
	// Blocking: a cleaner that opened the file in the instant before may
	// hold the lock while it looks.
	if err := unix.Flock(int(lk.Fd()), unix.LOCK_EX); err != nil {
		lk.Close()
		f.Abort()
		return nil, nil, fmt.Errorf("%s: lock: %w", f.Name(), err)
	}
	return f, lk, nil
}

// unnamedFirst is off only in tests of the fallback.
var unnamedFirst = true

// lockedMark starts the random part of a temporary name that was given to
// an already locked file.
const lockedMark = "L"

// LockedAtBirth reports whether the temporary file name (made by
// CreateLocked) was given to a file already locked.
func LockedAtBirth(name string) bool {
	name = filepath.Base(name)
	return strings.HasPrefix(name, TempPrefix) && strings.HasPrefix(name[strings.LastIndexByte(name, '-')+1:], lockedMark)
}

// createUnnamed creates the file unnamed, locks it, and links it as
// TempPrefix+base+"-L<random>" in dir. It fails where O_TMPFILE or
// /proc/self/fd is missing; the caller then falls back to a named file.
func createUnnamed(dir, base, final string) (*File, *os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, nil, err
	}
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	lk, err := os.Open(proc)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	if err := unix.Flock(int(lk.Fd()), unix.LOCK_EX); err != nil {
		lk.Close()
		unix.Close(fd)
		return nil, nil, err
	}
	for range 10 {
		b := make([]byte, 6)
		rand.Read(b)
		name := filepath.Join(dir, TempPrefix+base+"-"+lockedMark+hex.EncodeToString(b))
		err = unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			return &File{File: os.NewFile(uintptr(fd), name), final: final}, lk, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	lk.Close()
	unix.Close(fd)
	return nil, nil, err
}
