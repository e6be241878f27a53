package capture

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/reach"
)

// pipeConn is the net.PacketConn the anacrolix server sees. The node's read
// loop pushes it the packets the library must see (responses to its own
// queries, and a sample of incoming queries so its routing table learns
// of their senders). The library's outgoing queries go out on the real
// socket; its replies are dropped, because the read loop has already
// answered.
type pipeConn struct {
	sock   *net.UDPConn
	reach  reach.Rule // where the library's queries may go
	in     chan packet
	queued atomic.Int64 // bytes of the packets in in
	asks   asks         // the library's queries, to tell which nodes answer (confirm.go)
	done   chan struct{}
	once   sync.Once
}

// The library's queue holds at most pipeSlots packets and pipeBytes
// bytes of them. Each packet is copied into a buffer of its own length,
// but a datagram can be 64 KB: by count alone, a flood of big forged
// responses (any transaction ID that is not the walk's goes to the
// library) could pin 64 MB per node. pipeBytes lets every slot hold a
// datagram the size of an Ethernet MTU, which KRPC packets fit, so it
// only bites on oversized ones.
const (
	pipeSlots = 1024
	pipeBytes = pipeSlots * 1500
)

type packet struct {
	b    []byte
	from netip.AddrPort
}

func newPipeConn(sock *net.UDPConn) *pipeConn {
	return &pipeConn{sock: sock, in: make(chan packet, pipeSlots), done: make(chan struct{})}
}

// push hands b to the library unless its queue is full, by count or by
// bytes (it then misses the packet, as it would with a full socket
// buffer, and push returns false).
func (p *pipeConn) push(b []byte, from netip.AddrPort) bool {
	size := int64(len(b))
	if p.queued.Add(size) > pipeBytes {
		p.queued.Add(-size)
		return false
	}
	select {
	case p.in <- packet{b: append([]byte(nil), b...), from: from}:
		return true
	default:
		p.queued.Add(-size)
		return false
	}
}

func (p *pipeConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case pk := <-p.in:
		p.queued.Add(-int64(len(pk.b)))
		return copy(b, pk.b), net.UDPAddrFromAddrPort(pk.from), nil
	case <-p.done:
		return 0, nil, net.ErrClosed
	}
}

func (p *pipeConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	var m krpc.Msg
	err := krpc.Parse(b, &m)
	if err == nil && m.Y != krpc.Query {
		return len(b), nil // our read loop answered already
	}
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: os.ErrInvalid}
	}
	// The library's traversals query every address a reply lists: only
	// those the run may reach go out (see internal/reach).
	ap := ua.AddrPort()
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	if !p.reach.OK(ap) {
		return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: reach.ErrUnreachable}
	}
	if err == nil {
		// On the wire, an ID of our own (asks.sent, libraryTIDTag).
		wire, ok := p.asks.sent(ap, m.T, time.Now())
		if !ok {
			return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: errTooManyAsks}
		}
		if _, err := p.sock.WriteToUDP(krpc.ReplaceT(b, &m, wire), ua); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return p.sock.WriteToUDP(b, ua)
}

// errTooManyAsks fails a library query sent while maxAsks of the node's
// are in flight.
var errTooManyAsks = errors.New("too many DHT queries in flight")

func (p *pipeConn) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeConn) LocalAddr() net.Addr              { return p.sock.LocalAddr() }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }
