package reach

import (
	"net/netip"
	"testing"
)

// TestFor: the cases are capture's, from before the rule moved here
// (pipeline/capture's TestReach), with fetch's peers among the addresses
// a run is pointed at.
func TestFor(t *testing.T) {
	into := func(s ...string) []netip.AddrPort {
		var out []netip.AddrPort
		for _, a := range s {
			out = append(out, netip.MustParseAddrPort(a))
		}
		return out
	}
	tests := []struct {
		name   string
		listen string
		into   []netip.AddrPort
		ok     []string
		not    []string
	}{
		{name: "on the Internet", listen: ":6881", into: into("67.215.246.10:6881"),
			ok:  []string{"67.215.246.10:6881", "8.8.8.8:53", "198.51.100.9:1"},
			not: []string{"127.0.0.1:6881", "10.0.0.1:6881", "172.31.255.255:1", "192.168.0.1:1", "169.254.9.9:1", "100.127.0.1:1", "0.0.0.1:1", "224.0.0.1:1", "250.1.1.1:1", "255.255.255.255:1", "8.8.8.8:0"}},
		{name: "listening on loopback", listen: "127.0.0.1:0",
			ok:  []string{"127.0.0.1:6881", "127.9.9.9:1", "8.8.8.8:53"},
			not: []string{"10.0.0.1:6881", "192.168.0.1:1"}},
		{name: "bootstrapped from loopback", listen: "0.0.0.0:6881", into: into("127.0.0.1:7000"),
			ok:  []string{"127.0.0.1:6881"},
			not: []string{"10.0.0.1:6881"}},
		{name: "bootstrapped from a LAN", listen: ":6881", into: into("192.168.1.5:6881"),
			ok:  []string{"192.168.1.6:6881", "10.0.0.1:6881", "100.64.1.1:1", "8.8.8.8:53"},
			not: []string{"127.0.0.1:6881", "0.0.0.1:1"}},
		{name: "IPv6 is never reached", listen: "[::1]:0", into: into("[::1]:7000", "[fd00::1]:1", "[2001:db8::1]:1"),
			ok:  []string{"8.8.8.8:53"},
			not: []string{"[::1]:6881", "[2001:4860::8888]:53", "[fd00::2]:1", "127.0.0.1:6881", "10.0.0.1:1"}},
		{name: "IPv4-mapped addresses are IPv4", listen: "[::ffff:127.0.0.1]:0",
			ok:  []string{"[::ffff:127.0.0.1]:6881", "127.0.0.1:6881", "[::ffff:8.8.8.8]:53"},
			not: []string{"[::ffff:10.0.0.1]:1"}},
		{name: "a listen address that is no IP address", listen: "localhost:0",
			ok:  []string{"8.8.8.8:53"},
			not: []string{"127.0.0.1:6881"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := For(tt.listen, tt.into)
			for _, a := range tt.ok {
				if !r.OK(netip.MustParseAddrPort(a)) {
					t.Errorf("%s out of reach, want in", a)
				}
			}
			for _, a := range tt.not {
				if r.OK(netip.MustParseAddrPort(a)) {
					t.Errorf("%s in reach, want out", a)
				}
			}
		})
	}
}

func TestClassOf(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want Class
	}{
		{"8.8.8.8", Public}, {"198.51.100.7", Public}, {"100.63.255.255", Public}, {"100.128.0.0", Public},
		{"127.0.0.1", Loopback}, {"127.255.255.254", Loopback}, {"::ffff:127.0.0.1", Loopback},
		{"10.0.0.1", Private}, {"172.16.0.1", Private}, {"192.168.1.1", Private}, {"169.254.169.254", Private},
		{"100.64.0.1", Private},
		{"0.0.0.0", Never}, {"0.1.2.3", Never}, {"224.0.0.1", Never}, {"239.255.255.255", Never},
		{"240.0.0.1", Never}, {"255.255.255.255", Never}, {"::1", Never}, {"::", Never}, {"2001:db8::1", Never},
	} {
		if got := ClassOf(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("ClassOf(%s) = %d, want %d", tt.addr, got, tt.want)
		}
	}
	if got := ClassOf(netip.Addr{}); got != Never {
		t.Errorf("ClassOf(the zero Addr) = %d, want Never", got)
	}
}
