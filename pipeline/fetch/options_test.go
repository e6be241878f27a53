package fetch

import (
	"testing"
	"time"
)

// TestValidateNamesTheOption: Validate's error names the option by its
// flag and gives the value, one option at a time. It used to say
// "timeouts must be positive" for any of three, and "peers per hash must
// be at least 1", with no value.
func TestValidateNamesTheOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"concurrency", func(o *Options) { o.Concurrency = 0 }, "--concurrency: 0 is outside 1-65536"},
		{"peers per hash", func(o *Options) { o.PeersPerHash = 0 }, "--peers-per-hash: 0 is less than 1"},
		{"timeout", func(o *Options) { o.Timeout = 0 }, "--timeout: 0s is not positive"},
		{"peer timeout", func(o *Options) { o.PeerTimeout = -time.Second }, "--peer-timeout: -1s is not positive"},
		{"connect timeout", func(o *Options) { o.ConnectTimeout = 0 }, "--connect-timeout: 0s is not positive"},
		{"deadline", func(o *Options) { o.Deadline = -time.Minute }, "--deadline: -1m0s is negative"},
		{"DHT query timeout", func(o *Options) { o.DHTQueryTimeout = -time.Second }, "DHTQueryTimeout: -1s is negative"},
		{"max metadata size", func(o *Options) { o.MaxMetadataSize = 0 }, "--max-metadata-size: 0 is outside 1-1073741824 (1 GiB)"},
		{"metadata memory", func(o *Options) { o.MetadataMemory = -1 }, "--metadata-memory: -1 is negative"},
		// As the command line words them (dhtboot.ListenProblem): this
		// said `port "99999" is not 0 .. 65535`, and for a missing port
		// the parser's "address 127.0.0.1: missing port in address".
		{"DHT listen port", func(o *Options) { o.DHTListen = ":99999" }, `--dht-listen: ":99999": port "99999" is not a number from 0 to 65535`},
		{"DHT listen without port", func(o *Options) { o.DHTListen = "127.0.0.1" },
			`--dht-listen: "127.0.0.1": missing port: want HOST:PORT (such as :6881 for every address, or 127.0.0.1:6881)`},
		{"DHT listen IPv6 unbracketed", func(o *Options) { o.DHTListen = "::1" },
			`--dht-listen: "::1": not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT`},
		{"peer", func(o *Options) { o.Peers = []string{"127.0.0.1"} }, `--peer: "127.0.0.1": address 127.0.0.1: missing port in address`},
		{"bootstrap", func(o *Options) { o.Bootstrap = []string{"x"} }, `--bootstrap: "x": address x: missing port in address`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			tt.edit(&o)
			if err := o.Validate(); err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	// "" is a free port on every address, as the command line takes it.
	o := testOptions()
	o.DHTListen = ""
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate() of DHTListen \"\" = %v, want nil", err)
	}
}
