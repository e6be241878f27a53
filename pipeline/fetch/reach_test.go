package fetch

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ckrpc "github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// onLoopback is the reach of a run pointed at loopback, as tests are.
var onLoopback = reach.Rule{Loopback: true}

// TestReachOf: what points a fetch run into the loopback or private
// ranges: a loopback --dht-listen (even with --no-dht), and a
// --bootstrap or --peer address in the range (a name as it resolves).
func TestReachOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(o *Options)
		want reach.Rule
	}{
		{"defaults, public routers", func(o *Options) { o.Bootstrap = []string{"67.215.246.10:6881"} }, reach.Rule{}},
		{"--no-dht", func(o *Options) {}, reach.Rule{}},
		{"a loopback --dht-listen", func(o *Options) { o.DHTListen = "127.0.0.1:0" }, reach.Rule{Loopback: true}},
		{"--no-dht, a loopback --dht-listen", func(o *Options) { o.DHTListen = "127.0.0.2:0" }, reach.Rule{Loopback: true}},
		{"a loopback --bootstrap", func(o *Options) { o.Bootstrap = []string{"127.0.0.1:7000"} }, reach.Rule{Loopback: true}},
		{"a LAN --bootstrap", func(o *Options) { o.Bootstrap = []string{"67.215.246.10:6881", "192.168.1.5:6881"} },
			reach.Rule{Private: true}},
		{"a loopback --peer", func(o *Options) { o.Peers = []string{"127.0.0.1:6881"} }, reach.Rule{Loopback: true}},
		{"a link-local --peer", func(o *Options) { o.Peers = []string{"169.254.1.1:6881"} }, reach.Rule{Private: true}},
		{"a --peer named localhost", func(o *Options) { o.Peers = []string{"localhost:6881"} }, reach.Rule{Loopback: true}},
		{"both ranges", func(o *Options) { o.Bootstrap, o.Peers = []string{"10.0.0.1:6881"}, []string{"127.0.0.1:1"} },
			reach.Rule{Loopback: true, Private: true}},
		{"IPv6 points nowhere", func(o *Options) { o.DHTListen, o.Peers = "[::1]:0", []string{"[::1]:6881", "[fd00::1]:1"} },
			reach.Rule{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.set(&o)
			if got := o.reachOf(context.Background()); got != tt.want {
				t.Fatalf("reach %+v, want %+v", got, tt.want)
			}
		})
	}
}

// guardLog is an Options.guard that lets loopback destinations through
// and records and refuses every other, so that a test of the reach rule
// never sends a packet off the host, even when the rule fails.
type guardLog struct {
	mu       sync.Mutex
	tcp, udp []string
}

func (g *guardLog) guard(network, addr string) error {
	if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().Unmap().IsLoopback() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if network == "tcp" {
		g.tcp = append(g.tcp, addr)
	} else {
		g.udp = append(g.udp, addr)
	}
	return fmt.Errorf("test guard: %s to %s refused: not loopback", network, addr)
}

func (g *guardLog) sent() (tcp, udp []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// The DHT node may query a node more than once.
	return slices.Sorted(slices.Values(g.tcp)), slices.Compact(slices.Sorted(slices.Values(g.udp)))
}

// TestOutOfReachNotDialled: on a run pointed at loopback, the loopback
// or private peers a DHT node or a job lists (the LAN, cloud metadata at
// 169.254.169.254, a host name) are neither dialled nor queried, and
// count in peers_out_of_reach; public ones and a --peer are. A job whose
// every peer was out of reach is no_peers, blaming no peer. fetch used to
// dial them all, and its DHT node to query every node a reply listed.
// The guard records what gets past the rule and refuses anything not on
// loopback: the public TEST-NET addresses are in reach and reach it.
func TestOutOfReachNotDialled(t *testing.T) {
	ap := netip.MustParseAddrPort
	private := []netip.AddrPort{ap("10.1.2.3:6881"), ap("192.168.1.1:80"), ap("169.254.169.254:80")}
	nodes := []netip.AddrPort{ap("10.9.9.9:6881"), ap("192.168.9.9:6881"), ap("169.254.169.254:53"), ap("198.51.100.8:6881")}
	for i, tt := range []struct {
		name       string
		dhtPeers   []netip.AddrPort // a lying DHT node's values (nil: --no-dht)
		jobPeers   []string
		named      []string // --peer
		outOfReach int64
		tcp, udp   []string // what got past the rule to the guard
		want       string   // outcome
	}{
		{name: "a DHT node's values and nodes", dhtPeers: append(slices.Clip(private), ap("198.51.100.7:6881")),
			outOfReach: 3, tcp: []string{"198.51.100.7:6881"}, udp: []string{"198.51.100.8:6881"},
			want: schema.OutcomeConnectFailed},
		{name: "a DHT node's values, all out of reach", dhtPeers: private, outOfReach: 3,
			udp: []string{"198.51.100.8:6881"}, want: schema.OutcomeNoPeers},
		{name: "a job's peers, all out of reach",
			jobPeers:   []string{"10.1.2.3:6881", "192.168.1.1:80", "169.254.169.254:80", "[::1]:6881", "[fd00::1]:80", "metadata.internal:80"},
			outOfReach: 6, want: schema.OutcomeNoPeers},
		{name: "a --peer is dialled whatever its range", jobPeers: []string{"10.1.2.3:6881"}, named: []string{"[2001:db8::9]:6881"},
			outOfReach: 1, tcp: []string{"[2001:db8::9]:6881"}, want: schema.OutcomeConnectFailed},
		{name: "a --peer on a LAN points the run there", jobPeers: []string{"192.168.1.1:80", "[fd00::1]:80"},
			named: []string{"10.9.8.7:6881"}, outOfReach: 1, tcp: []string{"10.9.8.7:6881", "192.168.1.1:80"},
			want: schema.OutcomeConnectFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var g guardLog
			o := testOptions()
			o.guard = g.guard
			o.Peers = tt.named
			if tt.dhtPeers != nil {
				o.Bootstrap = []string{startLyingNode(t, tt.dhtPeers, nodes...)}
			}
			f := newFetcher(t, o)
			job := schema.Job{InfoHash: schema.Hash(sha1.Sum(fmt.Appendf(nil, "out of reach %d", i))),
				HashType: schema.HashV1, Attempt: 1, LeaseID: "L", Peers: tt.jobPeers}
			r, ok := f.Fetch(context.Background(), job)
			if !ok {
				t.Fatal("no result")
			}
			checkResult(t, job, r)
			f.Close() // the DHT node's queries end: all of them have met the guard
			tcp, udp := g.sent()
			if !slices.Equal(tcp, tt.tcp) || !slices.Equal(udp, tt.udp) {
				t.Fatalf("past the reach rule: dials %q, DHT datagrams %q; want dials %q, datagrams %q", tcp, udp, tt.tcp, tt.udp)
			}
			st := f.Stats()
			if st.PeersOutOfReach != tt.outOfReach || r.PeersFound != int32(len(tt.tcp)) || r.Outcome != tt.want {
				t.Fatalf("peers_out_of_reach %d, peers found %d, outcome %s (%s); want %d, %d, %s",
					st.PeersOutOfReach, r.PeersFound, r.Outcome, r.Detail, tt.outOfReach, len(tt.tcp), tt.want)
			}
			if tt.want == schema.OutcomeNoPeers {
				if len(r.PeerFailures) != 0 || !strings.Contains(r.Detail, fmt.Sprintf("(%d out of reach)", tt.outOfReach)) {
					t.Fatalf("no_peers (%s) with peer failures %+v; want none, and the detail to count those out of reach",
						r.Detail, r.PeerFailures)
				}
			}
		})
	}
}

// TestHeardConnQueriesStayInReach: the DHT node's socket refuses a query
// to an address out of reach (the library's traversals query whatever a
// reply lists), sending nothing, and sends a reply there as before. The
// sink's first datagram is the reply sent after the refused query.
func TestHeardConnQueriesStayInReach(t *testing.T) {
	c := newHeardConn(udpSocket(t), reach.Rule{}) // a run on the Internet
	sink := udpSocket(t)
	id := []byte("fetch-node-id-012345")
	_, err := c.WriteTo(ckrpc.AppendPing(nil, []byte("aa"), id), sink.LocalAddr())
	if !errors.Is(err, reach.ErrUnreachable) {
		t.Fatalf("query to loopback: %v, want %v", err, reach.ErrUnreachable)
	}
	if _, err := c.WriteTo([]byte("not KRPC"), sink.LocalAddr()); !errors.Is(err, reach.ErrUnreachable) {
		t.Fatalf("a datagram that is no KRPC message, to loopback: %v, want %v", err, reach.ErrUnreachable)
	}
	reply := ckrpc.AppendReply(nil, []byte("bb"), ckrpc.Reply{ID: id}, nil)
	send(t, c, reply, sink.LocalAddr())
	buf := make([]byte, 2048)
	sink.SetReadDeadline(time.Now().Add(backstop))
	n, _, err := sink.ReadFrom(buf)
	if err != nil || string(buf[:n]) != string(reply) {
		t.Fatalf("sink read %q (%v), want the reply %q", buf[:n], err, reply)
	}
	if c.asked.len() != 0 {
		t.Fatalf("%d queries noted as asked, want none (none was sent)", c.asked.len())
	}
}
