package capture

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// FuzzListenProblem: ListenProblem, the check of --dht-listen, accepts
// only what openNodes can bind its nodeIDs nodes on (HOST:PORT with PORT
// and PORT+nodeIDs-1 ports, or 0; an IPv4 or unnamed host or a name)
// and says what else is wrong on one line.
func FuzzListenProblem(f *testing.F) {
	for _, s := range []string{":6881", "0.0.0.0:6881", "[::1]:6881", "[::ffff:127.0.0.1]:1", "h:0", ":65535", "6881", ":-1", ":+5", "[fe80::1%x]:1"} {
		f.Add(s, 1)
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, listen string, nodeIDs int) {
		msg := ListenProblem(listen, nodeIDs)
		if msg != "" {
			if strings.Contains(msg, "\n") {
				t.Fatalf("ListenProblem(%q, %d) = %q: more than one line", listen, nodeIDs, msg)
			}
			return
		}
		host, ps, err := net.SplitHostPort(listen)
		port, perr := strconv.Atoi(ps)
		if err != nil || perr != nil || port < 0 || port > 65535 || (port != 0 && port+max(nodeIDs, 1)-1 > 65535) {
			t.Fatalf("ListenProblem accepts %q for %d nodes: host %q, port %q", listen, nodeIDs, host, ps)
		}
		if ip, err := netip.ParseAddr(host); err == nil && !ip.Unmap().Is4() {
			t.Fatalf("ListenProblem accepts %q: %s is no IPv4 address", listen, host)
		}
	})
}
