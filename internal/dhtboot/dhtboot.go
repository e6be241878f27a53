// Package dhtboot holds what capture and fetch share about joining the
// DHT: the public routers they bootstrap from by default, the one
// syntax of their --bootstrap flag, and silencing the DHT library's
// global logger.
package dhtboot

import (
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
