package fetch

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestMemoryShare: the share of the metadata memory one remote address
// may hold is the larger of twice the metadata cap and an eighth of the
// budget, and none when that would be the whole budget.
func TestMemoryShare(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		memory, maxMeta      int64
		wantLimit, wantShare int64
	}{
		{"defaults: an eighth", DefaultMetadataMemory, DefaultMaxMetadataSize, DefaultMetadataMemory, 32 << 20},
		{"a large cap: twice it", 256 << 20, 64 << 20, 256 << 20, 128 << 20},
		{"a budget under twice the cap: none", 15 << 20, 10 << 20, 15 << 20, 0},
		{"a budget of twice the cap: none", 20 << 20, 10 << 20, 20 << 20, 0},
		{"a budget under the cap: raised to it, none", 1 << 20, 10 << 20, 10 << 20, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemBudget(tt.memory, tt.maxMeta)
			if m.limit != tt.wantLimit || m.share != tt.wantShare {
				t.Fatalf("limit %d, share %d; want %d, %d", m.limit, m.share, tt.wantLimit, tt.wantShare)
			}
		})
	}
}

// TestOneHostCannotStarveOthers: one hostile host, on the maxPortsPerIP
// ports an attempt may dial of one address or on as many addresses of
// its network, each announcing the metadata cap, sending all of it but a
// piece and stalling until --peer-timeout, in as many concurrent jobs,
// holds at most its share of --metadata-memory, and an honest peer on
// another host is served meanwhile. The budget is what the eight
// hoarders hold together: with no share they held all of it, and the
// honest exchange ended local_error; with a share per address, so did
// the eight addresses of one IPv6 /64 (which loopback addresses of one
// /24 stand in for, the budget's v4Bits shortened to 24). A hoarder
// refused for its host's share fails its job as rejected, a peer-level
// class, listed against that endpoint (merge penalises it; the hash is
// retried soon).
func TestOneHostCannotStarveOthers(t *testing.T) {
	const size = 1 << 20
	const held = size - metadataPieceSize // what one hoarder's exchange holds
	for _, tt := range []struct {
		name   string
		v4Bits int      // the budget's prefix of an IPv4 host
		hosts  []string // a hoarder's address each
	}{
		{"one address, many ports", hostBitsV4, slices.Repeat([]string{"127.0.0.9"}, maxPortsPerIP)},
		{"many addresses of one network", 24,
			[]string{"127.0.9.1", "127.0.9.2", "127.0.9.3", "127.0.9.4", "127.0.9.5", "127.0.9.6", "127.0.9.7", "127.0.9.8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions()
			o.MaxMetadataSize, o.MetadataMemory = size, int64(len(tt.hosts))*held
			// The hoarders hold until the test abandons them (see
			// TestMetadataMemoryBounded).
			o.Timeout, o.PeerTimeout = backstop, backstop
			f := newFetcher(t, o)
			f.mem.v4Bits = tt.v4Bits
			if f.mem.share != 2*size {
				t.Fatalf("share %d, want %d (twice the cap)", f.mem.share, 2*size)
			}
			hostile := netip.MustParseAddr(tt.hosts[0])
			hold, abandon := context.WithCancel(context.Background())
			defer abandon()
			type ended struct {
				addr string
				r    schema.Result
				kept bool
			}
			results := make(chan ended, len(tt.hosts))
			var wg sync.WaitGroup
			for i, ip := range tt.hosts {
				addr := startHoarderOn(t, ip, size)
				wg.Go(func() {
					r, kept := f.Fetch(hold, schema.Job{InfoHash: schema.Hash{0x40, byte(i)}, Peers: []string{addr}})
					results <- ended{addr, r, kept}
				})
			}
			// Every hoarder's exchange either ended or holds all it will:
			// an exchange holds at most held, so the bytes held reach held
			// for each job still running only then.
			var refused []ended
			for deadline := time.Now().Add(backstop); ; {
				for len(results) > 0 {
					refused = append(refused, <-results)
				}
				if f.mem.used.Load() == int64(len(tt.hosts)-len(refused))*held {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %v, %d bytes held with %d of %d hoarders' jobs ended", backstop, f.mem.used.Load(), len(refused), len(tt.hosts))
				}
				time.Sleep(5 * time.Millisecond)
			}
			if got := f.mem.held(hostile); got > f.mem.share || f.mem.used.Load() > f.mem.share {
				t.Errorf("%s's host holds %d bytes (%d in all), over its share %d", hostile, got, f.mem.used.Load(), f.mem.share)
			}
			honest := badpeers.NewTorrent(0x41, 2, 10)
			good := startPeer(t, badpeers.Good, honest)
			job := schema.Job{InfoHash: honest.InfoHash, Peers: []string{good.Addr()}}
			r, ok := f.Fetch(context.Background(), job)
			if !ok || r.Outcome != schema.OutcomeOK {
				t.Errorf("honest peer: %s (%s), want ok", r.Outcome, r.Detail)
			}
			checkResult(t, job, r)
			if len(refused) == 0 {
				t.Error("no hoarder was refused its host's share")
			}
			for _, e := range refused {
				if !e.kept || e.r.Outcome != schema.OutcomeRejected || len(e.r.PeerFailures) != 1 ||
					e.r.PeerFailures[0].Addr != e.addr || e.r.PeerFailures[0].Class != schema.OutcomeRejected ||
					!strings.Contains(e.r.Detail, "host ("+f.mem.host(hostile).String()+")") {
					t.Errorf("hoarder %s refused its share: %s (%s), peer failures %+v; want rejected, naming its host, listed against it",
						e.addr, e.r.Outcome, e.r.Detail, e.r.PeerFailures)
				}
			}
			abandon()
			wg.Wait()
			if used := f.mem.used.Load(); used != 0 || f.mem.held(hostile) != 0 {
				t.Fatalf("%d bytes still reserved (%d by %s's host) after the exchanges ended", used, f.mem.held(hostile), hostile)
			}
		})
	}
}

// TestMemoryHost: a share is counted per host: an IPv4 address, an IPv6
// /64 (an IPv4-mapped address is IPv4's).
func TestMemoryHost(t *testing.T) {
	m := newMemBudget(DefaultMetadataMemory, DefaultMaxMetadataSize)
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"192.0.2.1", "::ffff:192.0.2.1", true},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"127.0.0.1", "127.0.0.2", false},
	} {
		a, b := netip.MustParseAddr(tt.a), netip.MustParseAddr(tt.b)
		if got := m.host(a) == m.host(b); got != tt.same {
			t.Errorf("%s (%s) and %s (%s) one host: %v, want %v", a, m.host(a), b, m.host(b), got, tt.same)
		}
	}
}
