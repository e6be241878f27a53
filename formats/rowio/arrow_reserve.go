package rowio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
)

// eosLen is the size of an Arrow IPC stream's end-of-stream marker.
const eosLen = 8

// streamReserve reserves the disk space of an Arrow stream written in
// place into a regular file ("capture -o - > FILE", -o FILE.arrows) ahead
// of its batches, as a Parquet output's is (Writer.Reserve), so that a
// full disk (or quota, or file size limit) refuses a whole batch with an
// ErrOutputFull instead of cutting it mid-message, and the end-of-stream
// marker still fits. It reserves with fallocate(2)'s KEEP_SIZE, past the
// end of what was written: the file's size, and what a reader reads, stay
// the stream so far. Each batch is encoded into stage, and written to the
// file once the space it needs is reserved.
type streamReserve struct {
	f        *os.File
	name     string
	off      int64 // the end of the stream in f: where the next byte goes
	reserved int64 // f has disk space up to here
	stage    bytes.Buffer
	started  bool       // the schema message is in f
	full     *FullError // the reservation that failed: only what fits is taken since
	noAlloc  bool       // no fallocate here: nothing is reserved
}

// regularFileOf returns the regular file w is or wraps, or nil.
func regularFileOf(w io.Writer) *os.File {
	if f := fsutil.FileOf(w); f != nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f
		}
	}
	return nil
}

// reserveStream starts the reservations of an Arrow stream written into
// a regular file (nothing for another output), taking the first one: an
// error (an ErrOutputFull when there is no room) means the output cannot
// be written at all.
func (w *Writer[T]) reserveStream() error {
	f := regularFileOf(w.out)
	if f == nil || w.sr != nil || w.bw.Buffered() > 0 {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if fl, ferr := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err == nil && ferr == nil && fl&unix.O_APPEND != 0 {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			off = fi.Size() // appended: each write goes to the end
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	s := &streamReserve{f: f, name: w.name, off: off, reserved: off}
	if err := s.ensure(0); err != nil {
		return err
	}
	w.sr = s
	w.bw.Reset(&s.stage)
	return nil
}

// ensure reserves room for extra more bytes, the end-of-stream marker
// and reserveSlack (reserveAhead more when it must reserve), or failing
// that for as much of it as it can. It returns a *FullError once the disk
// cannot give the slack (the run should stop; what fits is still taken:
// fits), or another error of the reservation.
func (s *streamReserve) ensure(extra int64) error {
	need := s.off + extra + eosLen
	want := need + reserveSlack
	if s.noAlloc || want <= s.reserved {
		return nil
	}
	err := s.fallocate(want + reserveAhead)
	if err == nil || s.noAlloc {
		return nil
	}
	if !fsutil.IsNoSpace(err) {
		return fmt.Errorf("%s: reserving %d bytes: %w", s.name, want+reserveAhead, err)
	}
	if s.fallocate(want) == nil {
		return nil
	}
	if need > s.reserved {
		_ = s.fallocate(need)
	}
	return &FullError{Name: s.name, Err: fmt.Errorf("%s: reserving %d bytes: %w", s.name, want, err)}
}

// fallocate gives f disk space up to total, keeping its size. A total
// past the process's file size limit (RLIMIT_FSIZE, ulimit -f) is refused
// with EFBIG, as a write past it is: fallocate's KEEP_SIZE skips that
// check on ext4 and xfs, so the reservation was granted and the batch's
// write then failed mid-message.
func (s *streamReserve) fallocate(total int64) error {
	if total <= s.reserved {
		return nil
	}
	if lim, ok := fileSizeLimit(); ok && total > lim {
		return unix.EFBIG
	}
	var err error
	for {
		err = unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, total)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		s.reserved = total
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		s.noAlloc, err = true, nil
	}
	return err
}

// fileSizeLimit returns the process's file size limit (RLIMIT_FSIZE),
// and false when there is none.
func fileSizeLimit() (int64, bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur > math.MaxInt64 {
		return 0, false
	}
	return int64(rl.Cur), true
}

// fits reports whether n more bytes and the end-of-stream marker fit in
// the space reserved (always, where nothing can be reserved).
func (s *streamReserve) fits(n int64) bool {
	return s.noAlloc || s.off+n+eosLen <= s.reserved
}

// flushBatch writes the batch in stage to the file once its space is
// reserved. A batch that does not fit is refused whole (a *FullError):
// none of it is written but the schema message, should it be the first.
func (s *streamReserve) flushBatch() error {
	n := int64(s.stage.Len())
	if s.full == nil {
		if err := s.ensure(n); err != nil {
			fe, ok := errors.AsType[*FullError](err)
			if !ok {
				return err
			}
			s.full = fe
		}
	}
	if !s.fits(n) {
		b := s.stage.Bytes()
		s.stage.Reset()
		if !s.started && len(b) >= 8 {
			// The schema message, which the stream needs to end cleanly.
			l := 8 + int64(binary.LittleEndian.Uint32(b[4:8]))
			if err := s.write(b[:min(l, int64(len(b)))]); err != nil {
				return err
			}
		}
		return s.full
	}
	return s.write(s.stage.Next(s.stage.Len()))
}

// write writes b at the end of the stream.
func (s *streamReserve) write(b []byte) error {
	n, err := s.f.Write(b)
	s.off += int64(n)
	s.started = s.started || n > 0
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

// close writes what stage holds (the end of the stream) and gives back
// the space reserved past it.
func (s *streamReserve) close() error {
	err := s.write(s.stage.Next(s.stage.Len()))
	if s.reserved > s.off {
		// A failure only leaves the space allocated: the stream is whole.
		_ = unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, s.off, s.reserved-s.off)
	}
	return err
}

// A StreamStarter is an output that must be told before an Arrow stream's
// first record batch reaches it: fsutil.ReplacingStream (-o FILE.arrows
// --replace) replaces FILE only then, so that a run refused before it
// leaves FILE as it was. A stream that ends with no batch does not call
// it: its caller decides.
type StreamStarter interface{ StartStream() error }

// starterOf returns the StreamStarter w is or wraps (Unwrap() io.Writer),
// or nil.
func starterOf(w io.Writer) StreamStarter {
	for range 8 {
		if s, ok := w.(StreamStarter); ok {
			return s
		}
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}
