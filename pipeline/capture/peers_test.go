package capture

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/torrent/bencode"

	ikrpc "github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/reach"
)

// TestGetPeersReturnsAnnouncedPeers: a peer announced to a node is in
// the "values" of that node's get_peers replies for the hash (capture
// acknowledged announces and handed out no peer: a sink for the swarm),
// with the announced port.
func TestGetPeersReturnsAnnouncedPeers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	addrs, wait := runAsync(t, ctx, o, &memSink{})
	defer func() { cancel(); wait() }()
	announcer := sendAll(t, addrs[0], ikrpc.AppendGetPeers(nil, []byte("g1"), peerID, hashN(1)))
	tok := append([]byte(nil), replies(t, announcer, 1)[0].Token...)
	announcer.Write(ikrpc.AppendAnnouncePeer(nil, []byte("a1"), peerID, hashN(1), 51413, tok))
	replies(t, announcer, 1)
	searcher := sendAll(t, addrs[0], ikrpc.AppendGetPeers(nil, []byte("g2"), []byte("SEARCHER-0123456789a"), hashN(1)),
		ikrpc.AppendGetPeers(nil, []byte("g3"), []byte("SEARCHER-0123456789a"), hashN(2)))
	want := netip.AddrPortFrom(announcer.LocalAddr().(*net.UDPAddr).AddrPort().Addr(), 51413)
	buf := make([]byte, 1<<16)
	got := map[string][]string{}
	searcher.SetReadDeadline(time.Now().Add(hangGuard))
	for len(got) < 2 {
		nb, err := searcher.Read(buf)
		if err != nil {
			t.Fatalf("after %d replies: %v", len(got), err)
		}
		var m krpc.Msg
		err = bencode.Unmarshal(buf[:nb], &m)
		if err == nil && m.Y == "q" {
			continue // the node's own query to a contact it just learned (find_node): not a reply
		}
		if err != nil || m.R == nil {
			t.Fatalf("reply %q: %v", buf[:nb], err)
		}
		var vs []string
		for _, v := range m.R.Values {
			vs = append(vs, v.String())
		}
		got[m.T] = vs
	}
	if !slices.Equal(got["g2"], []string{want.String()}) || len(got["g3"]) != 0 {
		t.Fatalf("values %v, want %s for the announced hash and none for another", got, want)
	}
}

func TestPeerStore(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	peer := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), 6881)
	}
	values := func(s *peerStore, ih []byte, at time.Time) []string {
		var out []string
		v := s.appendValues(nil, ih, at)
		for i := 0; i+6 <= len(v); i += 6 {
			out = append(out, netip.AddrPortFrom(netip.AddrFrom4([4]byte(v[i:i+4])), uint16(v[i+4])<<8|uint16(v[i+5])).String())
		}
		return out
	}
	ih := [20]byte(hashN(1))
	t.Run("expires after peerTTL, an announce again refreshes", func(t *testing.T) {
		var s peerStore
		s.add(ih, peer(1), t0)
		s.add(ih, peer(2), t0)
		s.add(ih, peer(2), t0.Add(20*time.Minute))
		if got := values(&s, ih[:], t0.Add(29*time.Minute)); len(got) != 2 {
			t.Errorf("at 29 min: %v, want both", got)
		}
		if got := values(&s, ih[:], t0.Add(31*time.Minute)); !slices.Equal(got, []string{peer(2).String()}) {
			t.Errorf("at 31 min: %v, want only the peer announced again", got)
		}
	})
	t.Run("at most maxPeersPerHash: a new one replaces the oldest", func(t *testing.T) {
		var s peerStore
		for i := range maxPeersPerHash + 1 {
			s.add(ih, peer(i), t0.Add(time.Duration(i)*time.Second))
		}
		got := values(&s, ih[:], t0.Add(time.Minute))
		if len(got) != maxPeersPerHash || slices.Contains(got, peer(0).String()) || !slices.Contains(got, peer(maxPeersPerHash).String()) {
			t.Errorf("%v: want the %d newest", got, maxPeersPerHash)
		}
	})
	t.Run("at most maxStoredHashes: the first announced makes way", func(t *testing.T) {
		var s peerStore
		for i := range maxStoredHashes + 1 {
			s.add([20]byte(hashN(1000+i)), peer(1), t0)
		}
		if len(s.m) != maxStoredHashes || len(values(&s, hashN(1000), t0)) != 0 || len(values(&s, hashN(1000+maxStoredHashes), t0)) != 1 {
			t.Errorf("%d hashes stored; want %d, the first gone, the last there", len(s.m), maxStoredHashes)
		}
	})
}

// TestStoredPeersAreInReach: a node hands out in "values" only peers it
// would dial itself (internal/reach): an announce from a private or
// loopback address, in a run that does not reach that range, is recorded
// but not handed to whoever asks (the Internet learnt of LAN peers).
func TestStoredPeersAreInReach(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reach reach.Rule
		want  int // values in the get_peers reply
	}{
		{"a run on the Internet", reach.Rule{}, 0},
		{"a run pointed into loopback", reach.Rule{Loopback: true}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := fuzzNode(t)
			n.r.reach = tt.reach
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			from := c.LocalAddr().(*net.UDPAddr).AddrPort()
			now := time.Now()
			tok := n.r.tokens.make(now, from.Addr())
			n.handle(ikrpc.AppendAnnouncePeer(nil, []byte("a1"), peerID, hashN(1), 51413, tok[:]), from, now)
			n.handle(ikrpc.AppendGetPeers(nil, []byte("g1"), peerID, hashN(1)), from, now)
			buf := make([]byte, 1<<16)
			for {
				c.SetReadDeadline(time.Now().Add(hangGuard))
				nb, err := c.Read(buf)
				if err != nil {
					t.Fatal(err)
				}
				var m krpc.Msg
				if err := bencode.Unmarshal(buf[:nb], &m); err != nil || m.R == nil {
					t.Fatalf("reply %q: %v", buf[:nb], err)
				}
				if m.T != "g1" {
					continue
				}
				if len(m.R.Values) != tt.want {
					t.Fatalf("values %v, want %d", m.R.Values, tt.want)
				}
				break
			}
			if len(n.batch) != 2 || n.batch[0].PeerPort != 51413 {
				t.Fatalf("observations %+v, want the announce (port 51413) and the get_peers", n.batch)
			}
		})
	}
}
