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
		{"DHT listen", func(o *Options) { o.DHTListen = ":99999" }, `--dht-listen: ":99999": port "99999" is not 0 .. 65535`},
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
}
