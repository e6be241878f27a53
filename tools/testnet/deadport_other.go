//go:build !unix

package testnet

import (
	"io"
	"net"
)

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// HoldPort takes a free port and releases it at once: connections to it
// are refused unless another program takes the port in between.
func HoldPort() (io.Closer, *net.TCPAddr, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	return nopCloser{}, addr, nil
}
