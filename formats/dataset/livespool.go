// A spool that can be read while it is written.

package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
)

// LiveSpool is a Spool whose content can be read while it is being
// written: a stage that streams its input (an Arrow IPC stream, a hash
// list) reads it as it arrives instead of after the whole pipe has been
// copied and fsynced. Durability is unchanged: the file gets its final
// name only once complete and durable (Wait), and a stage must not
// commit anything it read from it before then; a kill before that leaves
// a temporary spool that Salvage recovers, a failed write (a full disk)
// sets what was written aside as Salvage would, and a failed fsync (or
// close or rename) sets it aside whole (Wait's error says where). The spool stays locked until
// Close, after its rename too: the run that spooled it closes it once it
// has committed it or given it up, and a run looking for leftovers
// meanwhile leaves it alone (ClaimLeftover). A Close before the copy has
// ended (an interrupted run) stops the copy and leaves what was written
// under the temporary name, for Salvage, durably (Stop waits for that);
// the lock goes only once the copy has ended, so that no other run takes
// a file still written to.
type LiveSpool struct {
	path  string        // the final path
	rf    *os.File      // a read-only handle on the file, valid across the rename
	ended chan struct{} // closed when the copy has ended

	// keepErr is why what a stopped copy wrote may not be durable.
	keepErr error

	mu      sync.Mutex
	cond    *sync.Cond
	written int64 // bytes in the file so far
	done    bool  // the copy ended (err says how)
	err     error
	closed  bool
	stop    chan struct{} // closed by a Close before the copy ended
	// returned counts the source's reads that have returned (counted
	// before each is handed to the copy): a stopped copy that has
	// received fewer waits for the one on its way, whose bytes have left
	// the source.
	returned atomic.Int64
}

// errStopped is the error of a copy that Close stopped.
var errStopped = errors.New("spool stopped by Close before its input ended; what was written is left for Salvage")

// spoolChunk is the size of the copy's reads and writes.
const spoolChunk = 1 << 20

// writebackEvery is how many bytes a live spool writes between asking the
// kernel to start writing them back, so that the fsync at the end finds
// little left to do.
const writebackEvery = 64 << 20

// StartSpool starts copying r into a new file with extension ext in the
// inbox folder dir, as Spool does, and returns at once. Every byte copied
// is also written to tee (a checksum, say) when it is not nil, before
// readers see it.
func StartSpool(dir, ext string, r io.Reader, tee io.Writer) (*LiveSpool, error) {
	if err := fsutil.MkdirAllSynced(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, NewName(ext))
	// Locked as Spool's, so that Salvage leaves a live spool alone, but
	// through the read handle, which stays open after the rename: a lock
	// released with the writing handle (before the rename) let a Salvage
	// that had opened the file just before take it for a dead writer's.
	f, rf, err := fsutil.CreateLocked(path)
	if err != nil {
		return nil, err
	}
	s := &LiveSpool{path: path, rf: rf, stop: make(chan struct{}), ended: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.copy(f, r, tee)
	return s, nil
}

// copy runs the spool: r to f (and tee), then f made durable under its
// final name. The reads run in their own goroutine (readChunks), so that
// a Close can stop the copy while a read waits on a silent pipe: that
// read is abandoned, and what it returns is not written.
func (s *LiveSpool) copy(f *fsutil.File, r io.Reader, tee io.Writer) {
	free := make(chan []byte, 2)
	free <- make([]byte, spoolChunk)
	free <- make([]byte, spoolChunk)
	reads := make(chan chunk)
	ended := make(chan struct{})
	defer close(ended) // the reads stop with the copy
	got := int64(0)    // chunks received
	go readChunks(r, free, reads, ended, &s.returned)
	var sinceWriteback int64
	var err, keepErr error
	kept := false
	for {
		var c chunk
		if stopped(s.stop) {
			// Reads that have returned are written: their bytes left
			// the pipe. Their buffers are not handed back, so at most
			// two are; one still waiting is abandoned.
			if s.returned.Load() > got {
				c = <-reads // a read that returned: it comes
			} else {
				select {
				case c = <-reads:
				default:
					// Not Abort: what was written is Salvage's, whole,
					// and durable: the run says it is kept.
					err, kept = errStopped, true
					keepErr = keepStopped(f, filepath.Dir(s.path))
				}
			}
			if err != nil {
				break
			}
		} else {
			select {
			case c = <-reads:
			case <-s.stop:
				continue
			}
		}
		got++
		if c.n > 0 {
			if _, err = writeSpool(f, c.buf[:c.n]); err != nil {
				// Readers may see the file cut meanwhile; nothing they
				// read is committed, since Wait returns the error.
				err, kept = keepWritten(f, filepath.Dir(s.path), err), true
				break
			}
			if tee != nil {
				tee.Write(c.buf[:c.n])
			}
			if sinceWriteback += int64(c.n); sinceWriteback >= writebackEvery {
				fsutil.StartWriteback(f.File)
				sinceWriteback = 0
			}
			s.mu.Lock()
			s.written += int64(c.n)
			s.mu.Unlock()
			s.cond.Broadcast()
		}
		if !stopped(s.stop) {
			free <- c.buf
		}
		if errors.Is(c.err, io.EOF) {
			// A failed fsync, close or rename sets the file aside,
			// as a failed write does: it is not removed.
			err, kept = commitSpool(f, filepath.Dir(s.path)), true
			break
		}
		if c.err != nil {
			err = c.err
			break
		}
	}
	if err != nil && !kept {
		f.Abort()
	}
	if err == nil {
		spoolCommitted() // renamed to Path, and durable: not yet done
	}
	s.mu.Lock()
	s.done, s.err, s.keepErr = true, err, keepErr
	if s.closed {
		s.rf.Close() // the lock outlived Close until now
	}
	s.mu.Unlock()
	s.cond.Broadcast()
	close(s.ended)
}

// keepStopped closes the temporary file f of a copy that Close stopped,
// having made what was written durable where Salvage finds it: its data
// (fdatasync) and its entry in the inbox folder dir (fsync). It returns
// why they may not be.
func keepStopped(f *fsutil.File, dir string) error {
	err := syncStopped(f)
	f.File.Close()
	if err == nil {
		err = fsutil.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// syncStopped makes the data of a stopped spool's file durable (a
// variable for tests: to see that it is called, or make it fail).
var syncStopped = func(f *fsutil.File) error { return unix.Fdatasync(int(f.Fd())) }

// A chunk is one read of a live spool's source.
type chunk struct {
	buf []byte
	n   int
	err error
}

// readChunks reads r into the buffers from free and hands each read on
// reads, until a read fails or ends or the copy has ended (ended is
// closed); a read under way then is abandoned: what it returns is
// dropped. It counts each read that returns in returned before handing
// it on.
func readChunks(r io.Reader, free <-chan []byte, reads chan<- chunk, ended <-chan struct{}, returned *atomic.Int64) {
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-ended:
			return
		}
		n, err := r.Read(buf)
		returned.Add(1)
		select {
		case reads <- chunk{buf, n, err}:
		case <-ended:
			return
		}
		if err != nil {
			return
		}
	}
}

// stopped reports whether c is closed.
func stopped(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Path is the spool's final path, where the file is once Wait returns
// nil.
func (s *LiveSpool) Path() string { return s.path }

// Wait blocks until the copy has ended and returns its error: nil once
// the whole input is durable at Path. It returns ctx's error if ctx ends
// first.
func (s *LiveSpool) Wait(ctx context.Context) error {
	defer context.AfterFunc(ctx, s.wake)()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.done && ctx.Err() == nil {
		s.cond.Wait()
	}
	if !s.done {
		return ctx.Err()
	}
	return s.err
}

// spoolCommitted is called by a copy that has committed its spool to
// Path, before Wait sees it done (a variable for tests: to hold a copy
// there while its run is stopped).
var spoolCommitted = func() {}

// EndedWhole reports whether the copy has ended with the whole input
// durable at Path, the nil error of Wait, whatever a caller's context
// said: a run stopped while its spool was being committed (already
// renamed to Path, so a user sees it there) finds here, once Stop has
// returned, that the spool is kept whole rather than cut short.
func (s *LiveSpool) EndedWhole() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done && s.err == nil
}

// wake wakes every waiter, to look at its context.
func (s *LiveSpool) wake() {
	s.mu.Lock()
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Err is the copy's error if it has ended with one.
func (s *LiveSpool) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// NewReader returns a reader of the spool's content from its first byte:
// a read waits for bytes not copied yet, and the reader ends (io.EOF)
// where the input ended. If the copy failed, reads return its error once
// they reach the point where it stopped. A read waiting when ctx ends
// returns ctx's error: an interrupted run does not hang on a silent pipe.
func (s *LiveSpool) NewReader(ctx context.Context) io.Reader {
	context.AfterFunc(ctx, s.wake)
	return &spoolReader{s: s, ctx: ctx}
}

// Close releases the read handle and the lock; readers fail after it.
// Before the copy has ended, it stops the copy (Wait then returns an
// error) and returns at once; the lock is released when the copy ends,
// and not before: a copy held in a write that never returns keeps it
// until the process exits.
func (s *LiveSpool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	if !s.done {
		close(s.stop) // the copy's end releases the lock
		return nil
	}
	return s.rf.Close()
}

// Stop is Close for a run that is stopping and about to exit: once the
// copy is stopped, it waits (up to wait) for the copy to end, so that
// what was written, left under the temporary name for Salvage, is
// durable before the process exits. It returns an error when the copy
// has not ended by then, or when what it wrote could not be made
// durable; after a copy that ended by itself, it is Close.
func (s *LiveSpool) Stop(wait time.Duration) error {
	s.Close()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.ended:
	case <-t.C:
		return fmt.Errorf("%s: a spool's copy did not end within %v, so what it wrote may not be durable", filepath.Dir(s.path), wait)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keepErr
}

type spoolReader struct {
	s   *LiveSpool
	ctx context.Context
	off int64
}

func (r *spoolReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s := r.s
	s.mu.Lock()
	for r.off >= s.written && !s.done && !s.closed && r.ctx.Err() == nil {
		s.cond.Wait()
	}
	avail, done, err, closed := s.written-r.off, s.done, s.err, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return 0, os.ErrClosed
	case avail <= 0 && r.ctx.Err() != nil:
		return 0, r.ctx.Err()
	case avail <= 0 && done && err != nil:
		return 0, fmt.Errorf("spooling stdin: %w", err)
	case avail <= 0:
		return 0, io.EOF
	}
	n, rerr := s.rf.ReadAt(p[:min(int64(len(p)), avail)], r.off)
	r.off += int64(n)
	if n > 0 {
		return n, nil
	}
	if rerr == nil || errors.Is(rerr, io.EOF) {
		rerr = io.ErrUnexpectedEOF // the file holds less than was written to it
	}
	return 0, rerr
}
