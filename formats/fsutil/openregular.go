package fsutil

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// OpenRegular opens the file at path as os.OpenFile(path, flag, perm)
// does, but only a regular file: anything else there (a FIFO, directory,
// device, socket or symbolic link) is refused with a *NotRegularError, as
// CheckRegular refuses it, and is left as it is. Unlike CheckRegular
// followed by an open, it looks at what it opened, not at what was at
// path a moment before: the open does not follow a link (O_NOFOLLOW),
// nor wait for a FIFO's other end (O_NONBLOCK), nor make a terminal the
// process's own (O_NOCTTY), and the open descriptor is fstat(2)ed.
// The file returned does blocking I/O, as os.OpenFile's. With O_CREATE
// it makes the file when nothing is there (a dangling link is refused).
func OpenRegular(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRegular(path, flag, perm, false)
}

// OpenRegularTarget is OpenRegular for a file that may be a symbolic
// link (DIR/policy.json, which "policy set" writes through a link): the
// link is followed, and what it leads to must be a regular file, as
// CheckRegularTarget says.
func OpenRegularTarget(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRegular(path, flag, perm, true)
}

// openingRegular, if set (by tests), runs just before openRegular's
// open(2) of path.
var openingRegular func(path string)

func openRegular(path string, flag int, perm fs.FileMode, follow bool) (*os.File, error) {
	how := flag | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	if !follow {
		how |= unix.O_NOFOLLOW
	}
	if openingRegular != nil {
		openingRegular(path)
	}
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, how, uint32(perm.Perm()))
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, openRefusal(path, err, follow)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if m := typeOf(uint32(st.Mode)); !m.IsRegular() {
		unix.Close(fd)
		return nil, &NotRegularError{Path: path, Kind: kindOf(m)}
	}
	// A regular file's reads and writes never wait on O_NONBLOCK's
	// account, but the flag is cleared all the same, so that the file is
	// as os.OpenFile's (and os.NewFile does not take it for a pollable
	// descriptor).
	// F_SETFL takes the open's status flags less O_NONBLOCK, and ignores
	// the access mode and creation flags: one fcntl(2) where
	// unix.SetNonblock takes two.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, how&^unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openRefusal is what openRegular returns when open(2) failed with err:
// a *NotRegularError when it failed on account of what is at path (a
// link that O_NOFOLLOW refused: ELOOP on Linux, EMLINK or EFTYPE
// elsewhere; a directory opened for writing: EISDIR; a socket, or a
// device without its driver: ENXIO, ENODEV...), or else os.OpenFile's
// error.
func openRefusal(path string, err error, follow bool) error {
	if errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	if errors.Is(err, unix.EISDIR) {
		return &NotRegularError{Path: path, Kind: kindOf(fs.ModeDir)}
	}
	// What is there now, which is what the open found unless it was
	// replaced meanwhile (then the open's own error is told).
	look := os.Lstat
	if follow {
		look = os.Stat
	}
	if fi, lerr := look(path); lerr == nil && !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
	}
	if errors.Is(err, unix.ELOOP) && !follow {
		if _, lerr := os.Lstat(path); lerr == nil {
			// The last element was a link at the open (ELOOP from a
			// loop of links on the way there fails the lstat too).
			return &NotRegularError{Path: path, Kind: kindOf(fs.ModeSymlink)}
		}
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// typeOf is the fs.FileMode type bits of a stat(2) st_mode.
func typeOf(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
