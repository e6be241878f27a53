package fsutil

import (
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Uncached writes a new file around the page cache (O_DIRECT), for the
// large files a commit writes once and makes durable anyway (the state's
// Parquet files):
//   - writing through the page cache costs a copy into pages the kernel
//     must find first, and on a virtual machine that hands freed memory
//     back to its host (free page reporting, as on this project's build
//     machines) each of those pages is a fault on the host too: 600 MB
//     took 1.4-1.6 s of system time there, against 0.05 s with O_DIRECT;
//   - the commit's syncfs then has only the file's last partial block
//     and its metadata left to write.
//
// Whole blocks go to the disk from an aligned buffer, UncachedBuffer
// bytes at a time, written by a goroutine of their own while the caller
// fills the next buffer; only the file's last partial block (under 4 KiB)
// goes through the page cache, and so does a file smaller than a buffer
// (see writeTail). Where the file system refuses O_DIRECT
// (tmpfs on older kernels, some FUSE file systems), the file is written
// through the page cache as by os.File. Nothing is durable before an
// fsync or SyncFS, as with any write.
//
// Uncached is not safe for concurrent use.
type Uncached struct {
	f         *os.File
	mayDirect bool        // O_DIRECT is to be tried once a buffer fills
	direct    bool        // the descriptor has O_DIRECT now
	directN   int64       // bytes written with O_DIRECT (for tests)
	buf       []byte      // the buffer being filled (aligned)
	nbuf      int         // buffers taken (up to uncachedBuffers)
	prev      []byte      // the last full buffer handed to the writer goroutine (TailAt)
	n         int         // bytes in buf
	size      int64       // bytes accepted so far
	sum       hash.Hash   // also fed every byte written, if set (a buffer at a time)
	free      chan []byte // buffers not in flight
	jobs      chan []byte // full buffers for the writer goroutine
	done      chan error  // the writer goroutine's first error, at its end
	err       error       // the first write error seen
	closed    bool
	summed    bool // the tail is in sum already (CloseLater)
}

// UncachedBuffer is the size of one write to the disk.
const UncachedBuffer = 1 << 20

// uncachedBuffers is how many buffers a file may have in use: the one
// being filled and those waiting for the disk, taken as needed. With two,
// the two apply workers of an incremental dedup waited 0.5-0.6 s (summed)
// for a free buffer in an apply phase of 1.6-1.9 s: a splice copies its
// unchanged chunks (1.5 MB of hashes first) faster than the disk takes
// them.
const uncachedBuffers = 4

// blockAlign is the alignment O_DIRECT asks of a write's memory, offset
// and length: the largest logical block size of common disks.
const blockAlign = 4096

// alignedBuffers hold Uncached's buffers between files.
var alignedBuffers = sync.Pool{New: func() any {
	b := make([]byte, UncachedBuffer+blockAlign)
	off := blockAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%blockAlign)
	return b[off%blockAlign:][:UncachedBuffer:UncachedBuffer]
}}

// CreateUncached creates (or truncates) the file at path, mode 0666 less
// the umask as os.Create, and returns a writer for it. If sum is not nil
// every byte written is also written to it.
func CreateUncached(path string, sum hash.Hash) (*Uncached, error) {
	return createUncached(path, sum, true)
}

// createUncached is CreateUncached that tries O_DIRECT only if direct.
func createUncached(path string, sum hash.Hash, direct bool) (*Uncached, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	u := &Uncached{f: f, mayDirect: direct, sum: sum, free: make(chan []byte, uncachedBuffers),
		jobs: make(chan []byte, uncachedBuffers), done: make(chan error, 1)}
	u.buf, u.nbuf = alignedBuffers.Get().([]byte), 1
	go u.writeBuffers()
	return u, nil
}

// Name is the file's path.
func (u *Uncached) Name() string { return u.f.Name() }

// Size is the number of bytes written so far.
func (u *Uncached) Size() int64 { return u.size }

// Write buffers p, writing each full buffer to the disk. An error is a
// *fs.PathError naming the file, like os.File's.
func (u *Uncached) Write(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if u.closed {
		return 0, &fs.PathError{Op: "write", Path: u.f.Name(), Err: fs.ErrClosed}
	}
	n := 0
	for len(p) > 0 {
		c := copy(u.buf[u.n:], p)
		u.n += c
		n += c
		u.size += int64(c)
		p = p[c:]
		if u.n == len(u.buf) {
			if err := u.flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// ReadFrom reads r to its end (io.EOF) into the file as Write would take
// what it reads, but reads straight into the buffer bound for the disk:
// a copy of a spliced state file's unchanged column chunks (2 MB a
// partition of a 20M-hash state) had every byte copied once more from
// the reader's buffer. It returns the bytes read and the first error,
// r's or a write's.
func (u *Uncached) ReadFrom(r io.Reader) (int64, error) {
	if u.err != nil {
		return 0, u.err
	}
	if u.closed {
		return 0, &fs.PathError{Op: "write", Path: u.f.Name(), Err: fs.ErrClosed}
	}
	var n int64
	for {
		m, err := r.Read(u.buf[u.n:])
		u.n += m
		n += int64(m)
		u.size += int64(m)
		if u.n == len(u.buf) {
			if ferr := u.flush(); ferr != nil {
				return n, ferr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// handedOff runs in flush right after a full buffer is handed to the
// writer goroutine (tests: to let the writer finish with it first).
var handedOff = func(*Uncached) {}

// flush hands the full buffer to the writer goroutine and takes a free
// one, waiting for it if both are in flight.
func (u *Uncached) flush() error {
	if u.sum != nil {
		u.sum.Write(u.buf)
	}
	u.prev = u.buf
	u.jobs <- u.buf
	handedOff(u)
	if u.nbuf < uncachedBuffers {
		select {
		case b := <-u.free:
			if &b[0] == &u.prev[0] {
				// The writer was done with the buffer just handed to it
				// before this select: it is u.prev, which TailAt reads
				// until the next flush, so it waits in u.free (FIFO: the
				// next flush takes it) and a new buffer is filled.
				u.free <- b
				b = alignedBuffers.Get().([]byte)
				u.nbuf++
			}
			u.buf = b
		default:
			u.buf = alignedBuffers.Get().([]byte)
			u.nbuf++
		}
		u.n = 0
		return nil
	}
	select {
	case u.buf = <-u.free:
		u.n = 0
		return nil
	case err := <-u.done: // the writer stopped on an error
		u.err = err
		return err
	}
}

// writeBuffers writes the full buffers it receives in order, returning
// each to u.free; it stops at the first error, which it sends on u.done.
func (u *Uncached) writeBuffers() {
	var off int64
	for b := range u.jobs {
		if err := u.writeAt(b, off); err != nil {
			u.done <- err
			return
		}
		off += int64(len(b))
		u.free <- b
	}
	u.done <- nil
}

// writeAt writes b at off, with O_DIRECT if the file may have it (b is
// whole blocks at a block boundary). A file system that refuses O_DIRECT
// (EINVAL from fcntl or from the write) gets the rest of the file through
// the page cache.
func (u *Uncached) writeAt(b []byte, off int64) error {
	if u.mayDirect && !u.direct {
		u.direct = u.setDirect(true) == nil
		u.mayDirect = u.direct
	}
	_, err := u.f.WriteAt(b, off)
	if err != nil && u.direct && errors.Is(err, unix.EINVAL) {
		u.mayDirect = false
		if err = u.buffered(); err == nil {
			_, err = u.f.WriteAt(b, off)
		}
	}
	if err == nil && u.direct {
		u.directN += int64(len(b))
	}
	return err
}

// buffered turns O_DIRECT off for the rest of the file.
func (u *Uncached) buffered() error {
	if !u.direct {
		return nil
	}
	if err := u.setDirect(false); err != nil {
		return err
	}
	u.direct = false
	return nil
}

// setDirect sets or clears the descriptor's O_DIRECT flag.
func (u *Uncached) setDirect(on bool) error {
	fd := u.f.Fd()
	fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err == nil {
		if on {
			fl |= unix.O_DIRECT
		} else {
			fl &^= unix.O_DIRECT
		}
		_, err = unix.FcntlInt(fd, unix.F_SETFL, fl)
	}
	if err != nil {
		return &fs.PathError{Op: "fcntl", Path: u.f.Name(), Err: err}
	}
	return nil
}

// Close writes what is buffered (the last partial block through the page
// cache), asks the kernel to start writing that back (StartWriteback) and
// closes the file. It returns the first error of the file's writes.
func (u *Uncached) Close() error {
	if u.closed {
		return &fs.PathError{Op: "close", Path: u.f.Name(), Err: fs.ErrClosed}
	}
	u.closed = true
	close(u.jobs)
	err := u.err
	if err == nil {
		err = <-u.done
	}
	if err == nil {
		err = u.writeTail()
	}
	// The writer goroutine has ended: every buffer is back.
	alignedBuffers.Put(u.buf[:cap(u.buf)])
	for len(u.free) > 0 {
		alignedBuffers.Put(<-u.free)
	}
	if cerr := u.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CloseLater is Close with its waits off the caller's path: it adds the
// buffered tail to the checksum (complete when CloseLater returns) and
// returns at once; the file's last buffers, its tail and its close are
// finished on a goroutine of their own, which then calls then with
// Close's error. Until then the file's bytes may not all be written: the
// caller waits for then before anything relies on them. After CloseLater,
// only Name and Size may be called.
func (u *Uncached) CloseLater(then func(error)) {
	if u.closed {
		then(&fs.PathError{Op: "close", Path: u.f.Name(), Err: fs.ErrClosed})
		return
	}
	if u.sum != nil {
		u.sum.Write(u.buf[:u.n])
	}
	u.summed = true
	// The buffers not in flight go back now: a file waiting for the disk
	// holds only what it still has to write.
	for len(u.free) > 0 {
		alignedBuffers.Put(<-u.free)
	}
	go func() { then(u.Close()) }()
}

// TailAt copies into p the file's bytes from off, if they are still in
// memory (the buffer being filled and the last one written: the last 1-2
// MiB of a file), and reports whether they were; a file's footer is read
// so without waiting for its writes. It must be called before Close or
// CloseLater.
func (u *Uncached) TailAt(p []byte, off int64) bool {
	inBuf := u.size - int64(u.n) // the file offset of u.buf[0]
	if off < 0 || off+int64(len(p)) > u.size {
		return false
	}
	if off >= inBuf {
		copy(p, u.buf[off-inBuf:u.n])
		return true
	}
	// The rest is in u.prev, the buffer just before u.buf: it is still
	// intact (the writer goroutine only reads it, and it is not reused
	// before the file's next flush).
	if u.prev == nil || off < inBuf-int64(len(u.prev)) {
		return false
	}
	k := copy(p, u.prev[off-(inBuf-int64(len(u.prev))):])
	copy(p[k:], u.buf[:u.n])
	return true
}

// writeTail writes the partial buffer at the file's end. A file that had
// whole buffers written with O_DIRECT has the whole blocks of its tail
// written so too and only its last partial block through the page cache;
// a smaller file goes through the page cache in one write (a direct write
// waits for the disk: for the 256 files of ~240 KB that a 10M-observation
// dedup writes, that made its apply phase 50% slower).
func (u *Uncached) writeTail() error {
	if u.sum != nil && !u.summed {
		u.sum.Write(u.buf[:u.n])
	}
	off := u.size - int64(u.n)
	whole := 0
	if u.direct {
		whole = u.n &^ (blockAlign - 1)
	}
	if whole > 0 {
		if err := u.writeAt(u.buf[:whole], off); err != nil {
			return err
		}
	}
	if rest := u.buf[whole:u.n]; len(rest) > 0 {
		if err := u.buffered(); err != nil {
			return err
		}
		if _, err := u.f.WriteAt(rest, off+int64(whole)); err != nil {
			return err
		}
		StartWriteback(u.f)
	}
	return nil
}

// Abort closes the file after a failed write, discarding what is
// buffered; the caller removes the file.
func (u *Uncached) Abort() {
	if u.closed {
		return
	}
	u.closed = true
	close(u.jobs)
	if u.err == nil {
		<-u.done
	}
	alignedBuffers.Put(u.buf[:cap(u.buf)]) // never in flight
	for len(u.free) > 0 {
		alignedBuffers.Put(<-u.free)
	}
	u.f.Close()
}
