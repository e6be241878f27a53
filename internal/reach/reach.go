// Package reach decides which addresses capture and fetch send packets
// to (DHT queries, TCP dials). DHT replies carry addresses that other
// nodes saw, and some of them are of networks that are not the Internet:
// a node inside a university, a company or a carrier-grade NAT hands out
// its neighbours' private addresses, and a hostile node can list
// 127.0.0.1 with any port. A program that queried or dialled them all
// would scan its own LAN and the local services of its host (and cloud
// metadata at 169.254.169.254), and a server on a hosting network gets
// abuse reports (and blocked) for it. So a run reaches only public IPv4
// addresses, and the loopback or private ranges only when it was pointed
// into one: an address it was given (a bootstrap node, a peer) in it, or,
// for loopback, a socket that listens there. Replies to whoever queried
// us are not the package's business.
package reach

import (
	"errors"
	"net"
	"net/netip"
)

// Class sorts addresses for a Rule.
type Class uint8

// The classes. Public is every IPv4 address in none of the others.
const (
	Public   Class = iota
	Loopback       // 127.0.0.0/8
	Private        // RFC 1918, link-local 169.254/16, carrier-grade NAT 100.64/10
	Never          // IPv6, 0/8, multicast, 240/4 and the broadcast address
)

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	reserved4 = netip.MustParsePrefix("240.0.0.0/4") // 255.255.255.255 too
)

// ClassOf classifies a (an IPv4-mapped IPv6 address as its IPv4 one).
func ClassOf(a netip.Addr) Class {
	a = a.Unmap()
	switch {
	case !a.Is4() || thisNet.Contains(a) || a.IsMulticast() || reserved4.Contains(a):
		return Never
	case a.IsLoopback():
		return Loopback
	case a.IsPrivate() || a.IsLinkLocalUnicast() || cgnat.Contains(a):
		return Private
	}
	return Public
}

// Rule is the set of addresses a run sends to: every public IPv4
// address, and the loopback or private ranges when allowed. The zero
// Rule is that of a run on the Internet.
type Rule struct{ Loopback, Private bool }

// For is the Rule of a run listening on listen (HOST:PORT; "" or a host
// that is no IP address adds nothing) and pointed at the addresses of
// into (its bootstrap nodes; fetch's peers named on its command line).
func For(listen string, into []netip.AddrPort) Rule {
	var r Rule
	if host, _, err := net.SplitHostPort(listen); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil && ClassOf(ip) == Loopback {
			r.Loopback = true
		}
	}
	for _, a := range into {
		switch ClassOf(a.Addr()) {
		case Loopback:
			r.Loopback = true
		case Private:
			r.Private = true
		}
	}
	return r
}

// OK reports whether a packet may go to ap.
func (r Rule) OK(ap netip.AddrPort) bool {
	if !ap.IsValid() || ap.Port() == 0 {
		return false
	}
	switch ClassOf(ap.Addr()) {
	case Public:
		return true
	case Loopback:
		return r.Loopback
	case Private:
		return r.Private
	}
	return false
}

// ErrUnreachable refuses a packet to an address outside a run's Rule.
var ErrUnreachable = errors.New("not a public address, nor in a range the run was pointed into")
