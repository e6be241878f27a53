package fsutil

import (
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
		if fd, name, lk, err := createUnnamed(dir, base, unix.LOCK_EX); err == nil {
			return &File{File: os.NewFile(uintptr(fd), name), final: path}, lk, nil
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

// createUnnamed creates a file in dir without a name (O_TMPFILE), takes
// the flock(2) how (unix.LOCK_EX or LOCK_SH) through a second, read-only
// handle, hold, and only then links the file as
// TempPrefix+base+"-L<random>" (linkHeld). It returns the file's
// descriptor and name. It fails, having created nothing, where O_TMPFILE
// or /proc/self/fd is missing; the caller then falls back to a named file.
func createUnnamed(dir, base string, how int) (fd int, name string, hold *os.File, err error) {
	fd, err = unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return -1, "", nil, err
	}
	hold, err = os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err == nil {
		if err = unix.Flock(int(hold.Fd()), how); err == nil {
			if name, err = linkHeld(fd, dir, base); err == nil {
				return fd, name, hold, nil
			}
		}
		hold.Close()
	}
	unix.Close(fd)
	return -1, "", nil, err
}

// linkHeld links the unnamed file fd, which its creator already holds
// locked, into dir as TempPrefix+base+"-"+lockedMark+randomHex(), trying
// other random names while one is taken, and returns the name.
func linkHeld(fd int, dir, base string) (string, error) {
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	var err error
	for range 10 {
		name := filepath.Join(dir, TempPrefix+base+"-"+lockedMark+randomHex())
		err = unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	return "", err
}
