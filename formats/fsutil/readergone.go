package fsutil

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReaderGone reports whether w writes to a pipe or FIFO that no reader
// holds open any more: a write to it would fail with EPIPE. w is looked
// at through the Unwrap() io.Writer methods of the writers that wrap it,
// down to one that gives its descriptor (syscall.Conn: an *os.File, a
// File). Anything else (a regular file, a terminal, a socket, a writer
// without a descriptor) is never reported gone.
//
// A writer that must not hand out work its reader will never take (a
// lease it commits before it writes) asks just before it commits; a
// reader that leaves after the question is only found by the write.
func ReaderGone(w io.Writer) bool {
	for {
		switch v := w.(type) {
		case syscall.Conn:
			return pipeReaderGone(v)
		case interface{ Unwrap() io.Writer }:
			w = v.Unwrap()
		default:
			return false
		}
	}
}

// pipeReaderGone is ReaderGone for a descriptor: on Linux, poll(2) on the
// write end of a pipe or FIFO reports POLLERR once every read end is
// closed (and only then).
func pipeReaderGone(c syscall.Conn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		for {
			_, err := unix.Poll(pfd, 0)
			if err == unix.EINTR {
				continue
			}
			gone = err == nil && pfd[0].Revents&unix.POLLERR != 0
			return
		}
	})
	return gone
}
