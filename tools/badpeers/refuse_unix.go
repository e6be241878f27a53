//go:build unix

package badpeers

import (
	"net"
	"syscall"
)

// fdCloser closes a raw socket.
type fdCloser int

func (f fdCloser) Close() error { return syscall.Close(int(f)) }

// bindNoListen binds a TCP socket to a free port on 127.0.0.1 without
// listening: the port stays ours and every connection to it is refused,
// with no risk of another listener taking the port over.
func bindNoListen() (fdCloser, *net.TCPAddr, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return 0, nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return 0, nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return 0, nil, err
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return fdCloser(fd), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, nil
}
