package app

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// FuzzCheckHostPort: checkHostPort, the check of --peer and --bootstrap
// endpoints, accepts only what a dial takes (a host and a port 1-65535)
// and says what else is wrong on one line.
func FuzzCheckHostPort(f *testing.F) {
	for _, s := range []string{"127.0.0.1:6881", "[::1]:1", "localhost:65535", "127.0.0.1:65536", ":80",
		"::1:80", "h:+80", "h:0x50", "[h]:1", "h:\n1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msg := checkHostPort(s)
		if msg != "" {
			if strings.Contains(msg, "\n") {
				t.Fatalf("checkHostPort(%q) = %q: more than one line", s, msg)
			}
			return
		}
		host, port, err := net.SplitHostPort(s)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			t.Fatalf("checkHostPort accepts %q: host %q, port %q (%v)", s, host, port, err)
		}
	})
}
