package fsutil

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// CreateOutput opens path for output a user asked for (-o FILE,
// --stats-json, --metrics-file). Unlike Create, which is for files of the
// dataset itself, it respects what is already at path:
//
//   - a character device, FIFO or socket, or a link in /proc (as
//     /dev/stdout and /dev/fd/N are) is opened and written in place: no
//     temporary file, no rename. Commit and Abort only close it, and a
//     write error (ENOSPC from /dev/full) comes back from Write. Through a
//     /proc link to a regular file (a shell redirection) it appends; a
//     socket, which open(2) cannot open, is written only when it is one
//     of this process's descriptors (/dev/stdout under systemd), through
//     a duplicate of it;
//   - a symbolic link is followed and its target replaced atomically; the
//     link stays;
//   - a regular file or a new name is written under a temporary name in
//     the same directory and renamed into place by Commit, as by Create.
//     A new file gets mode 0666 less the umask, a replaced one keeps its
//     mode.
func CreateOutput(path string) (*File, error) {
	t, err := resolveOutput(path)
	if err != nil {
		return nil, err
	}
	if t.kind == outDirect {
		f, err := openDirect(t.path)
		if err != nil {
			return nil, err
		}
		return &File{File: f, final: t.path, direct: true}, nil
	}
	dir, base := filepath.Split(t.path)
	SweepTemps(dir, base+"-") // a killed earlier run's, of the same output
	f, err := createTemp(dir, base)
	if err != nil {
		return nil, err
	}
	if t.kind == outRegular {
		if err := f.Chmod(t.mode); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
	}
	return &File{File: f, final: t.path}, nil
}

// Opener opens an output a user asked for, as CreateOutput does. The
// stages take one for their -o, so that a caller can watch the open and
// the writes of an output written in place (see WrittenInPlace).
type Opener func(path string) (*File, error)

// WrittenInPlace reports whether CreateOutput(path) would write in place
// (a FIFO, a device, a socket, or a /proc link such as /dev/stdout), as
// opposed to under a temporary name renamed into place. Opening such an
// output can block until a reader comes (a FIFO), and writing it until
// the reader takes the data, for good if it never does.
func WrittenInPlace(path string) bool {
	t, err := resolveOutput(path)
	return err == nil && t.kind == outDirect
}

// WriteOutput writes data to path as CreateOutput does.
func WriteOutput(path string, data []byte) error { return writeWith(CreateOutput, path, data) }

// CheckOutput reports, before any work is done, why CreateOutput(path)
// would certainly fail: path is a directory, its directory is missing or
// not writable, the device or FIFO it names is not writable, or it names
// a socket that is not one of this process's descriptors. It
// creates nothing. An empty path is refused.
func CheckOutput(path string) error {
	t, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if t.kind == outDirect {
		if err := unix.Access(t.path, unix.W_OK); err != nil {
			return fmt.Errorf("%s: not writable: %w", path, err)
		}
		if fi, err := os.Stat(t.path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			if _, ok := ownDescriptor(t.path, fi); !ok {
				return fmt.Errorf("%s: a socket can be written only as one of this process's descriptors (/dev/stdout, /dev/fd/N, -o -)", path)
			}
		}
		return nil
	}
	dir := dirOf(t.path)
	fi, err := os.Stat(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: directory %s: %w", path, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s: directory %s not writable: %w", path, dir, err)
	}
	return nil
}

type outKind int

const (
	outNew     outKind = iota // nothing at the path yet
	outRegular                // a regular file, replaced atomically
	outDirect                 // a device, FIFO, socket or /proc link, written in place
)

// outTarget is where an output goes once symbolic links are followed.
type outTarget struct {
	path string
	kind outKind
	mode fs.FileMode // permission bits of the regular file replaced
}

// errEmptyPath refuses an output named "" ("-o $OUT" with OUT unset).
var errEmptyPath = errors.New("empty file name")

// maxLinks bounds the symbolic links followed, as the kernel's ELOOP does.
const maxLinks = 40

// resolveOutput follows path's symbolic links one at a time, keeping
// every link's directory unnormalised (so that ".." after a linked
// directory means what the kernel takes it to), and says what is at the
// end. A link in /proc is not followed: its target names an open file
// ("pipe:[123]"), not a path, so it is written through as it is.
func resolveOutput(path string) (outTarget, error) {
	if path == "" {
		// os.Lstat("") fails as a missing file would: "" would pass for
		// a new file here, and only Commit's rename would fail.
		return outTarget{}, errEmptyPath
	}
	p := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return outTarget{path: p, kind: outNew}, nil
		}
		if err != nil {
			return outTarget{}, err
		}
		m := fi.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			if onProcFS(dirOf(p)) {
				return outTarget{path: p, kind: outDirect}, nil
			}
			if hops == maxLinks {
				return outTarget{}, &fs.PathError{Op: "open", Path: path, Err: unix.ELOOP}
			}
			to, err := os.Readlink(p)
			if err != nil {
				return outTarget{}, err
			}
			if !filepath.IsAbs(to) {
				dir, _ := filepath.Split(p)
				to = dir + to
			}
			p = to
		case m.IsDir():
			return outTarget{}, &fs.PathError{Op: "open", Path: path, Err: unix.EISDIR}
		case m.IsRegular():
			return outTarget{path: p, kind: outRegular, mode: m.Perm()}, nil
		default:
			return outTarget{path: p, kind: outDirect}, nil
		}
	}
}

// openDirect opens a device, FIFO or socket for writing, or what a /proc
// link stands for: a regular file behind one is appended to (it is a
// shell's redirection, already truncated by ">" or meant to grow by ">>").
func openDirect(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	flag := os.O_WRONLY
	switch {
	case fi.Mode()&fs.ModeSocket != 0:
		// open(2) cannot open a socket (ENXIO), but one of our own
		// descriptors (stdout under systemd is journald's socket) can be
		// written through a duplicate of it.
		if fd, ok := ownDescriptor(path, fi); ok {
			d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
			if err != nil {
				return nil, &fs.PathError{Op: "dup", Path: path, Err: err}
			}
			return os.NewFile(uintptr(d), path), nil
		}
	case fi.IsDir():
		return nil, &fs.PathError{Op: "open", Path: path, Err: unix.EISDIR}
	case fi.Mode().IsRegular():
		flag |= os.O_APPEND
	}
	return os.OpenFile(path, flag, 0)
}

// ownDescriptor returns N when path ends in a descriptor number N
// (/dev/fd/N, /proc/self/fd/N) and this process's descriptor N is the
// file fi describes.
func ownDescriptor(path string, fi fs.FileInfo) (int, bool) {
	fd, err := strconv.Atoi(filepath.Base(path))
	if err != nil || fd < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0, false
	}
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uint64(want.Dev) != uint64(st.Dev) || uint64(want.Ino) != uint64(st.Ino) {
		return 0, false
	}
	return fd, true
}

// createTemp is openTemp holding the temporary file (holdTemp) for the
// sweep.
func createTemp(dir, base string) (*os.File, error) {
	f, err := openTemp(dir, base)
	if err == nil {
		holdTemp(f)
	}
	return f, err
}

// openTemp creates a new file named TempPrefix+base+"-<random>" in dir
// ("" is the working directory) with mode 0666, which the kernel reduces
// by the umask: os.CreateTemp asks for 0600, which would keep every other
// user from reading what is renamed into place.
func openTemp(dir, base string) (*os.File, error) {
	var err error
	for range 10 {
		b := make([]byte, 6)
		rand.Read(b)
		name := filepath.Join(dir, TempPrefix+base+"-"+hex.EncodeToString(b))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return nil, err
}

// dirOf is the directory part of p as filepath.Split gives it, not
// cleaned, without its trailing slash ("." when p has none).
func dirOf(p string) string {
	dir, _ := filepath.Split(p)
	switch {
	case dir == "":
		return "."
	case strings.Trim(dir, "/") == "":
		return "/"
	}
	return strings.TrimRight(dir, "/")
}

// onProcFS reports whether dir is on a proc filesystem.
func onProcFS(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}
