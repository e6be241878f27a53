// Package dhtboot holds what capture and fetch share about joining the
// DHT: the public routers they bootstrap from by default, the one
// syntax of their --bootstrap flag and of their --dht-listen address,
// and silencing the DHT library's global logger.
package dhtboot

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	alog "github.com/anacrolix/log"
	"github.com/urfave/cli/v2"
)

// defaults are long-running public DHT routers (BitTorrent Inc.'s,
// uTorrent's, Transmission's, libtorrent's, Vuze's and anacrolix's two).
// A name that does not resolve is skipped when a stage starts. Tests never
// use them: they start their own nodes on 127.0.0.1.
var defaults = []string{
	"router.bittorrent.com:6881",
	"router.utorrent.com:6881",
	"dht.transmissionbt.com:6881",
	"dht.libtorrent.org:25401",
	"dht.aelitis.com:6881",
	"dht.anacrolix.link:42069",
	"router.bittorrent.cloud:42069",
}

// Default returns the public routers (host:port) that capture and fetch
// join through when --bootstrap is not given. The slice is the caller's.
func Default() []string { return append([]string(nil), defaults...) }

// Flag is the --bootstrap flag of capture and fetch: repeatable, each
// value a host:port or a comma-separated list of them; "" alone means
// none. Parse turns its values into the list.
func Flag() *cli.StringSliceFlag {
	return &cli.StringSliceFlag{
		Name:  "bootstrap",
		Value: cli.NewStringSlice(Default()...),
		Usage: "join the DHT through router `HOST:PORT` (repeatable, or comma-separated; \"\" for none)",
	}
}

// Parse returns the host:port entries of --bootstrap values: a value may
// hold several, comma-separated; blanks around them and empty entries are
// dropped, so --bootstrap "" yields none.
func Parse(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// listenForms are what ListenProblem shows a --dht-listen should look like.
const listenForms = "(such as :6881 for every address, or 127.0.0.1:6881)"

// ListenProblem says what is wrong with addr as the UDP HOST:PORT a DHT
// node listens on (--dht-listen), quoting it as given, or "": HOST may be
// empty (every address), and PORT is 0 (a free one) to 65535. A host
// with no port, the usual slip, says "missing port" as --bootstrap and
// --peer do, and shows the forms taken. A host name is left to the
// resolver.
func ListenProblem(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		switch {
		case net.ParseIP(addr) != nil && strings.Contains(addr, ":"):
			return fmt.Sprintf("%q: not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT", addr)
		case errors.As(err, &ae) && ae.Err == "missing port in address":
			return fmt.Sprintf("%q: missing port: want HOST:PORT %s", addr, listenForms)
		}
		return fmt.Sprintf("%q: not HOST:PORT %s", addr, listenForms)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Sprintf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return ""
}

// QuietLibraryLogs silences anacrolix/log's package-level logger for the
// process; the binary's main calls it before anything else runs.
// anacrolix/dht v2.23.0 reports a KRPC message it cannot decode through
// it (log.Printf in server.go), not through the logger a Server is
// configured with, and at no level, which no filter level stops: any
// peer could write a line to stderr per packet, and turn --log-format
// json output into a mix of JSON and text. Dropping its handlers does.
func QuietLibraryLogs() {
	quietOnce.Do(func() {
		l := alog.Default
		l.Handlers = nil
		alog.Default = l
	})
}

var quietOnce sync.Once
