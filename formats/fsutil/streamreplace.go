package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ReplacingStream is a stream written in place that replaces an existing
// regular file (capture -o FILE.arrows --replace) only once it begins.
// Until Start, the stream goes into a temporary file beside FILE, named
// as CreateOutput names one (readers skip it, the next writer of FILE
// sweeps it away after a kill -9), and FILE stays as it was, holding the
// exclusive flock(2) a stream's writer holds (HoldStream): a second
// writer exits as it would on the stream itself, and no second run
// renames its own stream over this one. A run refused before its first
// batch (a --dht-state in use, bad input) calls Discard, and FILE is left
// as it was; Start renames the stream over FILE, whose name the stream
// keeps holding its lock, so that from then on FILE is the stream as
// "-o - > FILE" writes it: a kill -9 leaves it with the batches so far.
//
// It is an io.Writer (the stage's stdout) whose file FileOf finds, and
// whose StartStream (rowio calls it before an Arrow stream's first
// record batch) is Start.
type ReplacingStream struct {
	file   *os.File    // the stream's file, named as the output it replaces
	stream *StreamFile // its lock and periodic fsync
	temp   string      // its temporary name; "" once renamed or removed
	final  string      // the file replaced (symbolic links followed)
	old    *os.File    // holds the lock of the file replaced until Start
	// started: Start renamed the stream over the file it replaces.
	started bool
}

// ReplaceStream starts a stream that replaces the regular file at path
// (through symbolic links), fsynced every interval as HoldStream does.
// It returns an error matching fs.ErrNotExist when nothing is at path (a
// new file is no one's to keep: write it in place), and one matching
// ErrStreamHeld, naming the holder, when another process holds the
// file's lock.
func ReplaceStream(path string, interval time.Duration) (*ReplacingStream, error) {
	t, err := resolveOutput(path)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case outNew:
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	case outDirect:
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	old, err := lockReplaced(path, t.path)
	if err != nil {
		return nil, err
	}
	r := &ReplacingStream{final: t.path, old: old}
	dir, base := filepath.Split(t.path)
	sweepOutputTemps(dir, base) // a killed earlier run's
	if err := r.createTemp(path, dir, base, t.mode, interval); err != nil {
		old.Close()
		return nil, err
	}
	return r, nil
}

// lockReplaced opens the regular file at p (path names it for errors)
// and takes its exclusive flock, retrying for holdRetry as HoldStream
// does (a reader's Writing holds a shared lock for a moment). It checks
// that p still names the file locked: a writer that held it may have
// renamed its own stream over it before letting go.
func lockReplaced(path, p string) (*os.File, error) {
	for range 5 {
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK, 0)
		if errors.Is(err, fs.ErrPermission) {
			f, err = os.OpenFile(p, os.O_WRONLY|unix.O_NONBLOCK, 0) // written, not read: never truncated
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%s: not a regular file", path)
		}
		if err == nil {
			err = flockRetry(f)
			if errors.Is(err, unix.EWOULDBLOCK) {
				err = fmt.Errorf("%s: %w (%s): it is being written or read", path, ErrStreamHeld, LockHolder(fi))
			} else if err != nil {
				err = fmt.Errorf("%s: locking it: %w", path, err)
			}
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		if now, err := os.Stat(p); err == nil && os.SameFile(fi, now) {
			return f, nil
		}
		f.Close() // replaced meanwhile: lock what is there now
	}
	return nil, fmt.Errorf("%s: replaced again and again while it was being locked", path)
}

// flockRetry takes f's exclusive flock, trying for holdRetry.
func flockRetry(f *os.File) error {
	for end := time.Now().Add(holdRetry); ; time.Sleep(10 * time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(end) {
			return err
		}
	}
}

// createTemp creates the stream's temporary file in dir with mode, named
// path for errors, and holds it (HoldStream) before it has a name where
// the system allows it (O_TMPFILE), as createTemp does an output's: a
// file of that name found unlocked is a dead writer's.
func (r *ReplacingStream) createTemp(path, dir, base string, mode fs.FileMode, interval time.Duration) error {
	if dir == "" {
		dir = "."
	}
	fd, err := -1, error(unix.EOPNOTSUPP)
	if unnamedFirst {
		fd, err = unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	}
	unnamed := err == nil
	for i := 0; !unnamed && i < 10; i++ {
		r.temp = filepath.Join(dir, TempPrefix+base+"-"+randomHex())
		fd, err = unix.Open(r.temp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o666)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		r.temp = ""
		return &fs.PathError{Op: "create", Path: path, Err: err}
	}
	r.file = os.NewFile(uintptr(fd), path)
	if err = r.file.Chmod(mode); err == nil {
		r.stream, err = HoldStream(r.file, interval)
	}
	if err == nil && unnamed {
		r.temp, err = linkHeld(fd, dir, base)
	}
	if err != nil {
		r.stream.Close()
		r.file.Close()
		if !unnamed {
			os.Remove(r.temp)
		}
		r.temp = ""
		return fmt.Errorf("%s: creating its replacement: %w", path, errnoOf(err))
	}
	return nil
}

// Write writes p to the stream's file.
func (r *ReplacingStream) Write(p []byte) (int, error) { return r.file.Write(p) }

// Unwrap returns the stream's file (FileOf).
func (r *ReplacingStream) Unwrap() io.Writer { return r.file }

// Name is the path the stream replaces, as given.
func (r *ReplacingStream) Name() string { return r.file.Name() }

// File is the stream's file, for the caller to close after Close.
func (r *ReplacingStream) File() *os.File { return r.file }

// StartStream is Start: rowio calls it before the first record batch.
func (r *ReplacingStream) StartStream() error { return r.Start() }

// Started reports whether the stream replaced the file (Start).
func (r *ReplacingStream) Started() bool { return r.started }

// Start renames the stream over the file it replaces, once: what was
// written to it so far is fsynced first, the directory after, and the
// lock of the file replaced is let go (its disk space freed). An error
// (which does not name the file) leaves the file as it was, but for a
// failed fsync of the directory: then the rename was done.
func (r *ReplacingStream) Start() error {
	if r.started {
		return nil
	}
	if r.temp == "" {
		return errors.New("the stream was discarded")
	}
	if err := r.file.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	if err := stillReplaceable(r.final); err != nil {
		return err
	}
	if err := os.Rename(r.temp, r.final); err != nil {
		return fmt.Errorf("renaming the stream into place: %w", errnoOf(err))
	}
	r.temp, r.started = "", true
	r.old.Close()
	r.old = nil
	return SyncDir(dirOf(r.final))
}

// Discard removes the stream's temporary file unless Start renamed it,
// leaving the file it would have replaced as it was, and lets go of that
// file's lock.
func (r *ReplacingStream) Discard() {
	if r.temp != "" {
		os.Remove(r.temp)
		r.temp = ""
	}
	if r.old != nil {
		r.old.Close()
		r.old = nil
	}
}

// Close fsyncs the stream's file, lets go of its lock (StreamFile.Close)
// and closes it; a stream never started is discarded first. It returns
// the first failed fsync's error, or the close's.
func (r *ReplacingStream) Close() error {
	r.Discard() // a no-op once started
	err := r.stream.Close()
	if cerr := r.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", r.file.Name(), cerr)
	}
	return err
}
