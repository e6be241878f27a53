package capture

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	akrpc "github.com/anacrolix/dht/v2/krpc"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/reach"
)

// compactNodes encodes addrs as a BEP 5 "nodes" string.
func compactNodes(addrs ...string) []byte {
	var b []byte
	for i, a := range addrs {
		ap := netip.MustParseAddrPort(a)
		id := [20]byte{byte(i + 1), 0xcc}
		b = append(b, id[:]...)
		a4 := ap.Addr().As4()
		b = append(b, a4[:]...)
		b = binary.BigEndian.AppendUint16(b, ap.Port())
	}
	return b
}

// TestCrawlerQueriesOnlyPublicAddresses: a reply from a node on the
// Internet that lists loopback, private, link-local, carrier-grade NAT
// and reserved addresses gets only its public contact queued for the
// walk (all of them used to be queried: a LAN scan from the user's host,
// and UDP to its local services). fuzzNode's run has the reach of one on
// the Internet; the walk never runs, so nothing is sent.
func TestCrawlerQueriesOnlyPublicAddresses(t *testing.T) {
	n := fuzzNode(t)
	c := n.r.crawler
	from := netip.MustParseAddrPort("198.51.100.7:6881")
	const public = "198.51.100.9:6881"
	nodes := compactNodes("127.0.0.1:6881", "127.1.2.3:53", "10.1.2.3:6881", "172.16.5.5:6881", "192.168.1.10:6881",
		"169.254.1.1:6881", "100.64.0.1:6881", "0.1.2.3:6881", "240.0.0.1:6881", "255.255.255.255:6881", public)
	c.pending[3] = pending{addr: from, sent: time.Now(), kind: kindSample}
	n.handle(krpc.AppendReply(nil, []byte{'i', 0, 0, 3}, krpc.Reply{ID: []byte("remote-node-id-01234"), HasSamples: true,
		Nodes: nodes, Interval: 60}, nil), from, time.Now())
	var got []string
	for _, a := range c.fresh {
		got = append(got, a.String())
	}
	if !slices.Equal(got, []string{public}) {
		t.Fatalf("queued for the walk %v, want only %s", got, public)
	}
}

// TestLibraryQueriesStayInReach: the library's queries (its traversals
// query whatever a reply lists) go out only to addresses in reach; its
// replies are dropped as before. The listener is on loopback, out of
// reach of a run on the Internet.
func TestLibraryQueriesStayInReach(t *testing.T) {
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	sock, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	to := sink.LocalAddr()
	for _, tt := range []struct {
		name  string
		reach reach.Rule
		sent  bool
	}{{"on the Internet", reach.Rule{}, false}, {"pointed at loopback", reach.Rule{Loopback: true}, true}} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipeConn(sock)
			p.reach = tt.reach
			_, err := p.WriteTo(krpc.AppendPing(nil, []byte("pq"), peerID), to)
			if tt.sent != (err == nil) || (!tt.sent && !errors.Is(err, reach.ErrUnreachable)) {
				t.Fatalf("WriteTo: %v, want sent %v", err, tt.sent)
			}
			// A marker sent after it on the same socket, past the
			// pipeConn, arrives after it (loopback keeps a socket's
			// order): what came before the marker is what went out, with
			// no window of silence to wait out (300 ms was one).
			marker := []byte("marker")
			if _, err := sock.WriteTo(marker, to); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 1500)
			sink.SetReadDeadline(time.Now().Add(hangGuard))
			arrived := 0
			for {
				nb, _, rerr := sink.ReadFrom(buf)
				if rerr != nil {
					t.Fatalf("after %d packets, no marker: %v", arrived, rerr)
				}
				if string(buf[:nb]) == string(marker) {
					break
				}
				arrived++
			}
			if got := arrived == 1; got != tt.sent || arrived > 1 {
				t.Fatalf("%d packets arrived, want sent %v", arrived, tt.sent)
			}
		})
	}
}

// TestRepliesAdvertiseOnlyReachableNodes: the table snapshot that
// find_node and get_peers replies come from leaves out addresses the run
// would not query itself.
func TestRepliesAdvertiseOnlyReachableNodes(t *testing.T) {
	var nis []akrpc.NodeInfo
	for i, a := range []string{"192.168.1.10:6881", "127.0.0.1:6881", "198.51.100.9:6881"} {
		ap := netip.MustParseAddrPort(a)
		nis = append(nis, akrpc.NodeInfo{ID: [20]byte{byte(i)}, Addr: akrpc.NodeAddr{IP: ap.Addr().AsSlice(), Port: int(ap.Port())}})
	}
	tb := newTable(inReach(reach.Rule{}, nis))
	var got []string
	for _, comp := range tb.comp {
		parseCompact(comp[:], func(ct contact) { got = append(got, ct.Addr.String()) })
	}
	if !slices.Equal(got, []string{"198.51.100.9:6881"}) {
		t.Fatalf("table %v, want only the public node", got)
	}
}
