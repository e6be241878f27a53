package fetch

import (
	"net"
	"net/netip"
	"strconv"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// FuzzPeerAddr checks the two readers of a peer address that a jobs file
// or --peer gives fetch. peerAddrError accepts only a host and a port
// 1-65535 that merge also takes (schema.PeerAddrOK); canonicalAddr, the
// key avoid_peers and found peers are compared by, is idempotent, keeps
// an IP endpoint's address (unmapped) and port, leaves anything else as
// it is, and keeps an accepted endpoint accepted.
func FuzzPeerAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6881", "[::ffff:127.0.0.1]:80", "[::1]:1", "[fe80::1%eth0]:9",
		"example.com:65535", "host:0", "host:65536", ":80", "1.2.3.4", "a b:1", "[::1]:08", "[::ffff:1.2.3.4%z]:7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalAddr(s)
		if again := canonicalAddr(c); again != c {
			t.Fatalf("canonicalAddr(%q) = %q, then %q", s, c, again)
		}
		if ap, err := netip.ParseAddrPort(s); err != nil {
			if c != s {
				t.Fatalf("canonicalAddr(%q) = %q: not an IP endpoint, changed", s, c)
			}
		} else if cp, err := netip.ParseAddrPort(c); err != nil || cp.Addr() != ap.Addr().Unmap() || cp.Port() != ap.Port() {
			t.Fatalf("canonicalAddr(%q) = %q, which reads as %v (%v)", s, c, cp, err)
		}
		if peerAddrError(s) != nil {
			return
		}
		host, port, err := net.SplitHostPort(s)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 || !schema.PeerAddrOK(s) {
			t.Fatalf("peerAddrError accepts %q: host %q port %q (%v)", s, host, port, err)
		}
		if err := peerAddrError(c); err != nil {
			t.Fatalf("%q is accepted, its canonical form %q not: %v", s, c, err)
		}
	})
}
