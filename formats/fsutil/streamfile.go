package fsutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A stream written into a regular file in place ("capture -o - > FILE")
// is readable up to its last whole batch at any instant, which a reader
// must not take for the whole stream while its writer still writes:
// applied then, and again once whole (another checksum), its rows would
// count twice. So the writer holds an exclusive flock(2) on the file
// while it writes (HoldStream; the kernel drops it when the writer
// exits or is killed), and a reader that applies files asks Writing
// first and leaves a file that is being written alone.

// ErrStreamHeld is matched (errors.Is) by HoldStream's error when another
// process holds the lock of the file: another writer writes into it.
var ErrStreamHeld = errors.New("another process holds its lock")

// StreamFile is a regular file that a command writes a stream into in
// place (its stdout redirected to the file): HoldStream locks it and
// syncs it every interval.
type StreamFile struct {
	f    *os.File // what is written to: fsynced
	lock *os.File // the file opened again, holding the lock
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	err  error // the first failed fsync
}

// holdRetry is how long HoldStream tries to take the lock: a reader
// (Writing) holds a shared lock for a moment to test it. A variable
// for tests.
var holdRetry = 2 * time.Second

// HoldStream returns nil, nil unless w is (or wraps: Unwrap() io.Writer)
// an *os.File open on a regular file. Then it takes the exclusive flock
// of that file, on a descriptor of its own (a shell that opened the file
// for the command and keeps it open must not keep the lock after the
// command ends), and fsyncs the file every interval (0: only at Close)
// until Close, so that what reached the file is on disk within about
// interval, not only in the page cache, which a kill -9 leaves intact
// but a machine crash does not. If another process holds the lock (for
// more than a moment), the error matches ErrStreamHeld and names it.
func HoldStream(w io.Writer, interval time.Duration) (*StreamFile, error) {
	f := FileOf(w)
	if f == nil {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	lock, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		// No /proc, or a file we may not read: lock the descriptor we
		// were given (its lock then lasts while any process holds it).
		if lock, err = dupFile(f); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	for end := time.Now().Add(holdRetry); ; time.Sleep(10 * time.Millisecond) {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(end) {
			break
		}
	}
	if err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (%s): it is being written or read", f.Name(), ErrStreamHeld, LockHolder(fi))
		}
		return nil, fmt.Errorf("%s: locking it: %w", f.Name(), err)
	}
	s := &StreamFile{f: f, lock: lock, stop: make(chan struct{}), done: make(chan struct{})}
	go s.syncEvery(interval)
	return s, nil
}

// dupFile is a duplicate of f's descriptor, which shares its open file
// description (and so its flock).
func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// FileOf returns the *os.File w is or wraps (Unwrap() io.Writer), or nil.
func FileOf(w io.Writer) *os.File {
	for range 8 {
		switch v := w.(type) {
		case *os.File:
			return v
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

func (s *StreamFile) syncEvery(interval time.Duration) {
	defer close(s.done)
	if interval <= 0 {
		<-s.stop
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sync()
		}
	}
}

func (s *StreamFile) sync() {
	if err := s.f.Sync(); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = fmt.Errorf("%s: fsync: %w", s.f.Name(), err)
		}
		s.mu.Unlock()
	}
}

// Close stops the periodic fsync, fsyncs the file once more and drops
// the lock. It returns the first fsync's error, if any failed. A nil
// *StreamFile closes as a no-op.
func (s *StreamFile) Close() error {
	if s == nil {
		return nil
	}
	close(s.stop)
	<-s.done
	s.sync()
	s.lock.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Writing reports whether another process holds the exclusive lock of
// the regular file at path (HoldStream's): a stream is still being
// written into it. writer names that process as LockHolder does. It
// takes a shared lock for a moment to tell; a file it cannot open is
// not being written as far as it knows (the caller's open fails then).
// Anything but a regular file is not opened at all: opening a FIFO that
// nobody writes to blocks, and one a writer waits on would let it in.
func Writing(path string) (writer string, busy bool) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	// Non-blocking all the same, should a FIFO take the file's place
	// between the Stat and the open.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return LockHolder(fi), true
		}
		return "", false
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return "", false
}

// LockHolder names the process that holds a flock(2) on the file fi
// describes, as "infohash capture (pid 123)", from /proc/locks and the
// process's command line; "another process" where Linux's /proc does not
// tell.
func LockHolder(fi os.FileInfo) string {
	const unknown = "another process"
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return unknown
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return unknown
	}
	defer f.Close()
	dev := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF (a waiter
		// has "->" after the number).
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[3] != "WRITE" || fs[5] != dev {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil {
			continue
		}
		return describePID(pid)
	}
	return unknown
}

// describePID is "COMMAND SUBCOMMAND (pid N)" from /proc/N/cmdline, or
// "pid N".
func describePID(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		b = nil
	}
	return describeCmdline(b, pid)
}

// describeCmdline is describePID of command line b (arguments each
// ended by a NUL): the process sets it, so its name is shown as Holder
// shows a lock file's holder, one short line.
func describeCmdline(b []byte, pid int) string {
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	name := args[0][strings.LastIndexByte(args[0], '/')+1:]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		name += " " + args[1]
	}
	if name = Holder([]byte(name)); args[0] == "" || name == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("%s (pid %d)", name, pid)
}
