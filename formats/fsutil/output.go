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
	"time"

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
	sweepOutputTemps(dir, base) // a killed earlier run's, of the same output
	f, err := createTemp(dir, base, t.path)
	if err != nil {
		// Named as the user gave it: the temporary name said nothing
		// of which output could not be written ("open /sys/.tmp-x-…").
		return nil, &fs.PathError{Op: "create", Path: path, Err: errnoOf(err)}
	}
	if t.kind == outRegular {
		if err := f.Chmod(t.mode); err != nil {
			f.Abort()
			return nil, err
		}
	}
	return f, nil
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
// would certainly fail: path is a directory, its directory is missing,
// not writable or cannot take a new file (probeCreate: /proc, /sys,
// where root passes access(2)), the device or FIFO it names is not
// writable, or it names a socket that is not one of this process's
// descriptors. It leaves nothing behind. An empty path is refused.
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
	if err := probeCreate(dir, filepath.Base(t.path)); err != nil {
		return fmt.Errorf("%s: directory %s cannot take a new file: %w", path, dir, err)
	}
	return nil
}

// probeCreate creates a file in dir as CreateOutput's temporary file of
// output base would be, and removes it: unnamed (O_TMPFILE, nothing to
// see) where the filesystem has them, else named as openTemp names one
// (proc and sysfs have no O_TMPFILE). It returns why dir cannot take a
// new file, or nil; also nil for a full disk or quota and a lack of
// descriptors or memory, which the run meets as it did (a full disk
// is capture's and fetch's exit 1 with nothing crawled, not exit 2).
func probeCreate(dir, base string) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		// No O_TMPFILE here (EISDIR: a kernel without it).
		var f *os.File
		if f, err = openTemp(dir, base); err == nil {
			f.Close()
			return os.Remove(f.Name())
		}
		err = errnoOf(err)
	}
	for _, passes := range []error{unix.ENOSPC, unix.EDQUOT, unix.EMFILE, unix.ENFILE, unix.ENOMEM, unix.EINTR} {
		if errors.Is(err, passes) {
			return nil
		}
	}
	return err
}

// errnoOf is err without the *fs.PathError around it (whose path is a
// temporary name), or err.
func errnoOf(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
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

// createTemp creates the temporary file of output final (base in dir),
// held by a shared flock(2) so that a sweep tells its live writer from a
// killed one's debris. Where the system allows it (O_TMPFILE and
// /proc/self/fd, as CreateLocked), the file is created unnamed, locked
// through a second handle, and only then linked as
// TempPrefix+base+"-L<12 hex digits>"; that handle is closed once Commit
// or Abort has taken the name away. So a file of that name found unlocked
// is always a dead writer's, however young. Elsewhere the file is created
// named (openTemp) and locked just after (holdTemp), until it is closed.
func createTemp(dir, base, final string) (*File, error) {
	if dir == "" {
		dir = "."
	}
	if unnamedFirst {
		if fd, name, hold, err := createUnnamed(dir, base, unix.LOCK_SH); err == nil {
			return &File{File: os.NewFile(uintptr(fd), name), final: final, hold: hold, output: true}, nil
		}
	}
	f, err := openTemp(dir, base)
	if err != nil {
		return nil, err
	}
	holdTemp(f)
	return &File{File: f, final: final, output: true}, nil
}

// stillReplaceable reports (not naming final), just before an output's
// temporary file is renamed onto final, what is now there if it is
// neither nothing nor a regular file (Irregular): a FIFO, device,
// directory, socket or symbolic link made since CreateOutput looked (a
// /dev/null that was missing for a moment and made again). A rename would
// replace it; the output is refused.
func stillReplaceable(final string) error {
	if k := Irregular(final); k != "" {
		return fmt.Errorf("now %s, not a regular file: not replaced", k)
	}
	return nil
}

// Irregular names what is at path when that is neither nothing nor a
// regular file ("a FIFO", "a device", "a directory", "a socket", "a
// symbolic link": Lstat, a link is not followed); "" otherwise. It is the
// one rule by which a rename refuses to replace a path: an output's
// (stillReplaceable), and a file Create, CreateLocked, WriteFile or
// ReplaceFile writes (ErrNotRegular), such as a dataset's own files.
func Irregular(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return ""
	}
	return kindOf(fi.Mode())
}

// kindOf names the type of a file that is not a regular one.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String()
}

// randomHex is the random part of a temporary name: 12 hex digits.
func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// sweepOutputTemps removes from dir what killed writers of output base
// left (a kill -9 of capture, fetch or export -o FILE): at once, every
// file named exactly as createTemp names a file created locked for that
// output (TempPrefix+base+"-L" and 12 hex digits) that no live writer
// holds; after an hour unmodified (SweepTemps' rule), the other temporary
// names of base+"-" that no writer holds (a writer's without O_TMPFILE,
// locked only after its creation, or an older version's). Errors are
// ignored: it is housekeeping.
func sweepOutputTemps(dir, base string) {
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := TempPrefix + base + "-"
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) {
			continue
		}
		if rest := name[len(prefix):]; strings.HasPrefix(rest, lockedMark) && isRandomHex(rest[len(lockedMark):]) {
			removeUnheld(filepath.Join(dir, name))
		} else if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTempAge {
			removeUnheld(filepath.Join(dir, name))
		}
	}
}

// isRandomHex reports whether s is what randomHex gives.
func isRandomHex(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// openTemp creates a new file named TempPrefix+base+"-<random>" in dir
// ("" is the working directory) with mode 0666, which the kernel reduces
// by the umask: os.CreateTemp asks for 0600, which would keep every other
// user from reading what is renamed into place.
func openTemp(dir, base string) (*os.File, error) {
	var err error
	for range 10 {
		name := filepath.Join(dir, TempPrefix+base+"-"+randomHex())
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
