//go:build unix

package testnet

import (
	"io"
	"net"
	"syscall"
)

type fdCloser int

func (f fdCloser) Close() error { return syscall.Close(int(f)) }

// HoldPort binds a TCP socket to a free port on 127.0.0.1 without
// listening: every connection to it is refused, and no other listener
// (a peer started later, another test) can take the port over.
func HoldPort() (io.Closer, *net.TCPAddr, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil, nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, nil, err
	}
	return fdCloser(fd), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}, nil
}
