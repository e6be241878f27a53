package capture

import (
	"net"
	"net/netip"

	"github.com/anacrolix/dht/v2/krpc"
)

// Which addresses capture sends queries to. DHT replies carry addresses
// that other nodes saw, and some of them are of networks that are not
// the Internet: a node inside a university, a company or a carrier-grade
// NAT hands out its neighbours' private addresses, and a hostile node can
// list 127.0.0.1 with any port. A node that queried them all would scan
// its own LAN and the local services of its host, and a server on a
// hosting network gets abuse reports (and blocked) for it. So capture
// queries (through its crawler and its library's traversals) only public
// addresses, and the loopback or private ranges only when the run was
// pointed into one: a bootstrap address in it, or, for loopback, a
// socket that listens there and can reach nothing else. Replies to
// whoever queried us are not affected.

// addrClass sorts IPv4 addresses for reach.
type addrClass uint8

const (
	classPublic   addrClass = iota
	classLoopback           // 127.0.0.0/8
	classPrivate            // RFC 1918, link-local 169.254/16, carrier-grade NAT 100.64/10
	classNever              // 0/8, multicast, 240/4 and the broadcast address
)

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	reserved4 = netip.MustParsePrefix("240.0.0.0/4") // 255.255.255.255 too
)

func classOf(a netip.Addr) addrClass {
	a = a.Unmap()
	switch {
	case !a.Is4() || thisNet.Contains(a) || a.IsMulticast() || reserved4.Contains(a):
		return classNever
	case a.IsLoopback():
		return classLoopback
	case a.IsPrivate() || a.IsLinkLocalUnicast() || cgnat.Contains(a):
		return classPrivate
	}
	return classPublic
}

// reach is the set of addresses a run sends queries to: every public
// IPv4 address, and the loopback or private ranges when allowed.
type reach struct{ loopback, private bool }

// newReach is the reach of a run listening on listen (HOST:PORT) and
// bootstrapped from boot.
func newReach(listen string, boot []netip.AddrPort) reach {
	var r reach
	if host, _, err := net.SplitHostPort(listen); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil && classOf(ip) == classLoopback {
			r.loopback = true
		}
	}
	for _, b := range boot {
		switch classOf(b.Addr()) {
		case classLoopback:
			r.loopback = true
		case classPrivate:
			r.private = true
		}
	}
	return r
}

// ok reports whether a query may go to ap.
func (r reach) ok(ap netip.AddrPort) bool {
	if !ap.IsValid() || ap.Port() == 0 {
		return false
	}
	switch classOf(ap.Addr()) {
	case classPublic:
		return true
	case classLoopback:
		return r.loopback
	case classPrivate:
		return r.private
	}
	return false
}

// nodeInfos keeps the routing-table entries in reach, for the snapshot
// the read loop answers find_node and get_peers from: a node hands out
// only addresses it would query itself (a LAN neighbour that queried it
// is not advertised to the Internet).
func (r reach) nodeInfos(nis []krpc.NodeInfo) []krpc.NodeInfo {
	out := nis[:0:0]
	for _, ni := range nis {
		if ap := ni.Addr.UDP().AddrPort(); r.ok(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())) {
			out = append(out, ni)
		}
	}
	return out
}
