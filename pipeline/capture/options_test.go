package capture

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestCheckOptionsNamesTheOption: each unusable option is bad input whose
// message names its flag and the value given. One message used to cover
// three ("--dht-rate, --max-observations and --duration must not be
// negative"), naming neither which nor the value.
func TestCheckOptionsNamesTheOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"max-rps negative", func(o *Options) { o.MaxRPS = -2 }, "capture: --dht-rate: -2 is not 0 or more"},
		{"max-rps NaN", func(o *Options) { o.MaxRPS = math.NaN() }, "capture: --dht-rate: NaN is not 0 or more"},
		{"max-observations", func(o *Options) { o.MaxObservations = -5 }, "capture: --max-observations: -5 is negative"},
		{"duration", func(o *Options) { o.Duration = -time.Minute }, "capture: --duration: -1m0s is negative"},
		{"node-ids", func(o *Options) { o.NodeIDs = 300 }, "capture: --node-ids: 300 is more than 256"},
		{"max-sightings-per-hash negative", func(o *Options) { o.MaxSightingsPerHash = -1 }, "capture: --max-sightings-per-hash: -1 is not from 0 to 4095"},
		{"max-sightings-per-hash past its entry's count", func(o *Options) { o.MaxSightingsPerHash = 4096 }, "capture: --max-sightings-per-hash: 4096 is not from 0 to 4095"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			tt.edit(&o)
			_, err := checkOptions(o)
			if err == nil || err.Error() != tt.want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("error %v (exit %d), want %q (exit 2)", err, exitcode.Of(err), tt.want)
			}
			if strings.Count(err.Error(), "--") != 1 {
				t.Fatalf("%q names more than one flag", err)
			}
		})
	}
}

// TestListenCheckedFirst: a bad Listen is bad input naming --dht-listen as it
// was given, before the bootstrap routers are looked up. With the default
// routers, "capture --dht-listen abc" used to fail on router.bittorrent.com's
// DNS lookup; here a router with port 0 (refused without any lookup)
// stands for that, so that no test contacts the network.
func TestListenCheckedFirst(t *testing.T) {
	for _, tt := range []struct {
		listen  string
		nodeIDs int
		want    string
	}{
		{"abc", 1, `capture: --dht-listen: "abc": missing port: want HOST:PORT (such as :6881 for every address, or 127.0.0.1:6881)`},
		{"::1", 1, `capture: --dht-listen: "::1": ::1 is not an IPv4 address`},
		{":x", 1, `capture: --dht-listen: ":x": port "x" is not a number from 0 to 65535`},
		{":99999", 1, `capture: --dht-listen: ":99999": port "99999" is not a number`},
		{"[::1]:6881", 1, `capture: --dht-listen: "[::1]:6881": ::1 is not an IPv4 address`},
		// Said "--dht-listen \":65536\"", a port nobody typed.
		{":65535", 2, `capture: --dht-listen: ":65535" with --node-ids 2: node i listens on port 65535+i, past 65535 for the last one; give a port of at most 65534`},
		{"127.0.0.1:65500", 40, `give a port of at most 65496, or port 0`},
	} {
		t.Run(tt.listen, func(t *testing.T) {
			o := testOptions()
			o.Listen, o.NodeIDs, o.Bootstrap = tt.listen, tt.nodeIDs, []string{"127.0.0.1:0"}
			_, err := Run(t.Context(), o, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("error %v (exit %d), want %q (exit 2)", err, exitcode.Of(err), tt.want)
			}
			if strings.Contains(err.Error(), "65536") {
				t.Fatalf("%q names port 65536, which nobody gave", err)
			}
		})
	}
	for _, ok := range []struct {
		listen  string
		nodeIDs int
	}{{":0", 256}, {"127.0.0.1:6881", 1}, {":65534", 2}, {":65535", 1}, {"0.0.0.0:65281", 255}, {"localhost:6881", 4}, {"[::ffff:127.0.0.1]:1", 1}} {
		if p := ListenProblem(ok.listen, ok.nodeIDs); p != "" {
			t.Errorf("ListenProblem(%q, %d) = %q, want none", ok.listen, ok.nodeIDs, p)
		}
	}
}
