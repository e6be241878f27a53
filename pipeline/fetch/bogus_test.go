package fetch

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// startLyingNode starts a DHT node on 127.0.0.1 that answers every query
// with the given peers as get_peers values, and the given nodes (IPv4
// ones) as the nodes nearer the target.
func startLyingNode(t *testing.T, peers []netip.AddrPort, nodes ...netip.AddrPort) string {
	t.Helper()
	return startLiar(t, false, peers, nodes...)
}

// startLiar is startLyingNode; with onlyGetPeers, it lists the nodes
// only in its answers to get_peers (a lookup's), not to the queries of
// the library's own bootstrap and pings.
func startLiar(t *testing.T, onlyGetPeers bool, peers []netip.AddrPort, nodes ...netip.AddrPort) string {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var e bencode.Encoder
	e.Str("values").List()
	for _, p := range peers {
		a := p.Addr().As4()
		e.Bytes(binary.BigEndian.AppendUint16(a[:], p.Port()))
	}
	values := e.End().B
	var compact []byte
	for i, n := range nodes {
		id := [20]byte{'l', 'i', 'e', byte(i)}
		a := n.Addr().As4()
		compact = binary.BigEndian.AppendUint16(append(append(compact, id[:]...), a[:]...), n.Port())
	}
	go func() {
		buf := make([]byte, 1<<16)
		var m krpc.Msg
		id := []byte("lying-node-id-000001")
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if krpc.Parse(buf[:n], &m) != nil || m.Y != krpc.Query {
				continue
			}
			listed := compact
			if onlyGetPeers && string(m.Q) != "get_peers" {
				listed = nil
			}
			var r bencode.Encoder
			r.Dict().Str("r").Dict().Str("id").Bytes(id).Str("nodes").Bytes(listed).Str("token").Str("tok1")
			r.B = append(r.B, values...)
			r.End().Str("t").Bytes(m.T).Str("y").Str("r").End()
			_, _ = conn.WriteToUDPAddrPort(r.B, from)
		}
	}()
	return conn.LocalAddr().String()
}

// TestBogusDHTPeersSkipped: get_peers values that cannot be a peer (the
// unspecified address, which dials our own host, multicast and broadcast
// addresses) are not dialled nor counted as peers found, but as out of
// reach. The unspecified address used to reach the local good peer a
// second time, as "0.0.0.0:port".
func TestBogusDHTPeersSkipped(t *testing.T) {
	tor := badpeers.NewTorrent(12, 1, 10)
	good := startPeer(t, badpeers.Good, tor)
	port := good.TCPAddr().AddrPort().Port()
	node := startLyingNode(t, []netip.AddrPort{
		netip.AddrPortFrom(netip.IPv4Unspecified(), port),
		netip.AddrPortFrom(netip.AddrFrom4([4]byte{224, 0, 0, 1}), port),
		netip.AddrPortFrom(netip.AddrFrom4([4]byte{255, 255, 255, 255}), port),
		netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port),
	})
	o := testOptions()
	o.Bootstrap = []string{node}
	o.PeersPerHash = 1
	f := newFetcher(t, o)
	r, _ := f.Fetch(context.Background(), schema.Job{InfoHash: tor.InfoHash})
	if r.Outcome != schema.OutcomeOK || r.ServedBy != good.Addr() || r.PeersFound != 1 || r.PeersTried != 1 || len(r.PeerFailures) != 0 {
		t.Fatalf("outcome %s (%s) served by %s, found %d, tried %d, failures %+v; want ok from %s, 1 found and tried",
			r.Outcome, r.Detail, r.ServedBy, r.PeersFound, r.PeersTried, r.PeerFailures, good.Addr())
	}
	if st := f.Stats(); st.PeersOutOfReach != 3 {
		t.Fatalf("peers_out_of_reach %d, want the 3 bogus values", st.PeersOutOfReach)
	}
}

// TestPeerValue: a get_peers value is read as an address whatever it is
// (the reach rule refuses those that cannot be a peer's), unless it is
// none.
func TestPeerValue(t *testing.T) {
	for _, tt := range []struct {
		ip   net.IP
		port int
		want string // "" = no address
	}{
		{net.IPv4(127, 0, 0, 1), 6881, "127.0.0.1:6881"},
		{net.IP{10, 1, 2, 3}, 1, "10.1.2.3:1"},
		{net.ParseIP("2001:db8::1"), 80, "[2001:db8::1]:80"},
		{net.IPv4(127, 0, 0, 1), 0, "127.0.0.1:0"},
		{net.IPv4zero, 6881, "0.0.0.0:6881"},
		{net.IPv4bcast, 6881, "255.255.255.255:6881"},
		{net.IPv4(127, 0, 0, 1), 65536, ""},
		{net.IPv4(127, 0, 0, 1), -1, ""},
		{nil, 6881, ""},
		{net.IP{1, 2, 3}, 6881, ""},
	} {
		ap, ok := peerValue(tt.ip, tt.port)
		got := ""
		if ok {
			got = ap.String()
		}
		if got != tt.want {
			t.Errorf("peerValue(%v, %d) = %q, want %q", tt.ip, tt.port, got, tt.want)
		}
	}
}
