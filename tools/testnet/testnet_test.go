package testnet

import (
	"context"
	"crypto/sha1"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/krpc"
	alog "github.com/anacrolix/log"
	"github.com/anacrolix/torrent"
	"github.com/anacrolix/torrent/metainfo"

	"github.com/infohash/infohash/internal/dhtwalk"
)

func startNet(t *testing.T, cfg Config) *Net {
	t.Helper()
	// Start's context is the testnet's lifetime, not a start-up budget:
	// a 30 s timeout here stopped its searchers mid-test, or failed a
	// start slowed by load.
	n, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// client is an outside DHT node that bootstraps from the testnet (Client).
func client(t *testing.T, n *Net) *dht.Server {
	t.Helper()
	s, err := n.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// getPeers looks ih up from s and returns the peers found, failing the
// test if no node answered (every testnet node answers). It walks as
// fetch does: anacrolix/dht v2.23.0's AnnounceTraversal can stop before
// its first answer on a loaded machine (see dhtwalk.Walk).
func getPeers(t *testing.T, s *dht.Server, ih [20]byte) map[string]bool {
	t.Helper()
	w, err := dhtwalk.Start(s, ih)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for pv := range w.Peers {
		for _, p := range pv.Peers {
			found[p.String()] = true
		}
	}
	if st := w.Stats(); st.NumResponses == 0 {
		t.Fatalf("get_peers %x: no node answered (%d queried)", ih, st.NumAddrsTried)
	}
	return found
}

// TestClientClosedWithTheNet: Client's node answers to the testnet while
// it runs, is closed by Close (not left to each caller), and none is
// started after.
func TestClientClosedWithTheNet(t *testing.T) {
	n := startNet(t, Config{Seed: 19, Nodes: 2, Torrents: 1, SearchEvery: -1, Reannounce: -1})
	c := client(t, n)
	node := n.nodes[0].addr()
	if err := c.Ping(node).ToError(); err != nil {
		t.Fatalf("ping %s from the client: %v", node, err)
	}
	n.Close()
	if err := c.Ping(node).ToError(); err == nil || !strings.Contains(err.Error(), "server is closed") {
		t.Fatalf("ping after Close: %v, want the client closed", err)
	}
	if s, err := n.Client(t.Context()); err == nil || !strings.Contains(err.Error(), "the testnet is closed") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Client after Close: %v, want the testnet closed", err)
	}
}

func TestAnnouncedHashesAreFoundAndDeadPeersAreGone(t *testing.T) {
	n := startNet(t, Config{Seed: 7, Nodes: 12, Torrents: 6, Dead: 2, Searched: 2})
	c := client(t, n)
	for _, tor := range n.Torrents() {
		found := getPeers(t, c, tor.InfoHash)
		for _, s := range tor.Seeders {
			if !found[s] {
				t.Errorf("%x (dead=%v): get_peers found %v, want seeder %s", tor.InfoHash, tor.Dead, found, s)
			}
		}
		if tor.Dead {
			if conn, err := net.DialTimeout("tcp", tor.Seeders[0], time.Second); err == nil {
				conn.Close()
				t.Errorf("dead hash %x: its peer %s still accepts connections", tor.InfoHash, tor.Seeders[0])
			}
		}
	}
	for _, h := range n.Searched() {
		if found := getPeers(t, c, h); len(found) != 0 {
			t.Errorf("searched-only hash %x has peers %v", h, found)
		}
	}
}

func TestSampleInfohashesAnswersLikeBEP51(t *testing.T) {
	n := startNet(t, Config{Seed: 3, Nodes: 8, Torrents: 40, Dead: 1, Searched: 1, Interval: 7 * time.Second})
	c := client(t, n)
	stored := n.StoredHashes()
	truth := n.Truth().AllHashes()
	seen := map[[20]byte]bool{}
	for _, a := range n.BootstrapAddrs() {
		ua, _ := net.ResolveUDPAddr("udp4", a)
		res := c.Query(context.Background(), dht.NewAddr(ua), "sample_infohashes",
			dht.QueryInput{MsgArgs: krpc.MsgArgs{Target: krpc.RandomNodeID()}})
		if err := res.ToError(); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		r := res.Reply.R
		if r.Samples == nil || r.Num == nil || r.Interval == nil {
			t.Fatalf("%s: reply lacks samples/num/interval: %+v", a, r)
		}
		if *r.Interval != 7 {
			t.Errorf("%s: interval %d, want 7", a, *r.Interval)
		}
		if len(*r.Samples) > maxSamples || int64(len(*r.Samples)) > *r.Num {
			t.Errorf("%s: %d samples for num=%d", a, len(*r.Samples), *r.Num)
		}
		if len(r.Nodes) == 0 {
			t.Errorf("%s: reply has no nodes", a)
		}
		for _, s := range *r.Samples {
			seen[s] = true
			if !stored[s] || !truth[fmt.Sprintf("%x", s)] {
				t.Errorf("%s: sampled %x that the testnet never had", a, s)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no samples at all")
	}
}

func TestTorrentsAreRealisticAndServeMetadata(t *testing.T) {
	n := startNet(t, Config{Seed: 11, Nodes: 4, Torrents: 10, Dead: 0, Searched: 0})
	var single, multi, nested, big int
	for _, tor := range n.Torrents() {
		if sha1.Sum(tor.InfoBytes) != tor.InfoHash {
			t.Fatalf("%x: info bytes do not hash to the infohash", tor.InfoHash)
		}
		switch {
		case len(tor.Info.Files) == 0:
			single++
		default:
			multi++
			for _, f := range tor.Info.Files {
				if len(f.Path) > 1 {
					nested++
					break
				}
			}
		}
		if len(tor.InfoBytes) > 16<<10 {
			big++
		}
	}
	if single == 0 || multi == 0 || nested == 0 || big == 0 {
		t.Fatalf("single=%d multi=%d nested=%d big(>16KiB)=%d; want each > 0", single, multi, nested, big)
	}
	// Fetch the metadata of a big torrent from its seeder over BEP 9.
	var want Torrent
	for _, tor := range n.Torrents() {
		if len(tor.InfoBytes) > 16<<10 {
			want = tor
		}
	}
	cfg := torrent.NewDefaultClientConfig()
	cfg.SetListenAddr("127.0.0.1:0")
	cfg.DisableIPv6, cfg.NoDHT, cfg.NoUpload = true, true, true
	cfg.DataDir = t.TempDir()
	cfg.DefaultStorage = noopStorage{}
	cfg.Logger = alog.Default.FilterLevel(alog.Disabled)
	cl, err := torrent.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tt, _ := cl.AddTorrentOpt(torrent.AddTorrentOpts{InfoHash: want.InfoHash})
	addr, _ := tcpAddr(want.Seeders[0])
	tt.AddPeers([]torrent.PeerInfo{{Addr: addr, Source: torrent.PeerSourceDhtGetPeers}})
	// No deadline of its own: go test's -timeout bounds a seeder that
	// never serves (15 s is not much on a loaded machine under -race).
	<-tt.GotInfo()
	if got := metainfo.HashBytes(tt.Metainfo().InfoBytes); got != want.InfoHash {
		t.Fatalf("got info hashing to %x, want %x", got, want.InfoHash)
	}
}

func TestDeterministicAndTruthRoundTrips(t *testing.T) {
	a := startNet(t, Config{Seed: 5, Nodes: 4, Torrents: 3, Dead: 1, Searched: 2, SearchEvery: -1})
	b := startNet(t, Config{Seed: 5, Nodes: 4, Torrents: 3, Dead: 1, Searched: 2, SearchEvery: -1})
	ta, tb := a.Truth(), b.Truth()
	for i := range ta.Announced {
		if ta.Announced[i].InfoHash != tb.Announced[i].InfoHash || ta.Announced[i].Name != tb.Announced[i].Name {
			t.Fatalf("same seed, different torrent %d: %+v vs %+v", i, ta.Announced[i], tb.Announced[i])
		}
	}
	if ta.Searched[0].InfoHash != tb.Searched[0].InfoHash || ta.Dead[0].InfoHash != tb.Dead[0].InfoHash {
		t.Fatal("same seed, different searched or dead hashes")
	}
	a.AddTruth("slow_peer", TruthEntry{InfoHash: ta.Announced[0].InfoHash, Peers: []string{"127.0.0.1:9"}})
	path := filepath.Join(t.TempDir(), "truth.json")
	if err := WriteTruthFile(path, a.Truth()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTruth(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Announced) != 3 || len(got.Dead) != 1 || len(got.Searched) != 2 || len(got.Bootstrap) != 4 ||
		len(got.Extra["slow_peer"]) != 1 {
		t.Fatalf("round trip lost entries: %+v", got)
	}
	if !got.AllHashes()[ta.Announced[0].InfoHash] || got.AllHashes()[ta.Searched[0].InfoHash] {
		t.Fatal("AllHashes must hold announced hashes and not searched-only ones")
	}
}

// TestAnnounceStoresOnTheClosestNodes: a lookup ends once it has heard
// from the nodes nearest the hash, so an announce counts only if those
// nodes store the peer. The nearest node drops the announcing
// traversal's get_peers (as a loaded node's full socket does); Announce
// must still leave the peer there, not settle for nodes farther away.
func TestAnnounceStoresOnTheClosestNodes(t *testing.T) {
	n := startNet(t, Config{Seed: 11, Nodes: 16, Torrents: 1, SearchEvery: -1, Reannounce: -1})
	for i := range 6 {
		ih := sha1.Sum(fmt.Appendf(nil, "closest-%d", i))
		near := n.closestNodes(ih, storedWanted)
		near[0].dropNextGetPeers(ih)
		port := 40000 + i
		if err := n.Announce(t.Context(), ih, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}); err != nil {
			t.Fatal(err)
		}
		for rank, nd := range near {
			if !nd.stores(ih, port) {
				t.Errorf("hash %d: node %d nearest (%s) does not store the peer", i, rank+1, nd.addr())
			}
		}
	}
}

// TestAnnounceWaitsForTheStore: the library stores an announce it has
// answered on a goroutine of its own, which a loaded machine can delay.
// Here the nearest node's store takes nothing until it has been read 800
// times, more than Announce used to read it (100 polls per announce, 5
// announces: 519 to 564 reads in all, the library's own included) before
// giving up with ErrNotStored; Announce must wait for it.
func TestAnnounceWaitsForTheStore(t *testing.T) {
	n := startNet(t, Config{Seed: 13, Nodes: 4, SearchEvery: -1, Reannounce: -1})
	ih := sha1.Sum([]byte("slow store"))
	near := n.closestNodes(ih, 1)[0]
	open := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(open) }) }
	t.Cleanup(release)
	gate := func() { <-open }
	near.store.beforeAdd.Store(&gate)
	go func() {
		for near.store.gets.Load() < 800 && t.Context().Err() == nil {
			time.Sleep(time.Millisecond)
		}
		release()
	}()
	if err := n.Announce(t.Context(), ih, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40100}); err != nil {
		t.Fatalf("announce with a slow store: %v (the store was polled %d times)", err, near.store.gets.Load())
	}
	if !near.stores(ih, 40100) {
		t.Error("the nearest node does not store the peer")
	}
}

// TestDeadFlap: with DeadFlap the dead hashes leave the nodes' stores and
// come back, each in turn; without it they stay stored.
func TestDeadFlap(t *testing.T) {
	for _, tc := range []struct {
		name string
		flap time.Duration
		back bool // seen gone, then stored again
	}{
		{"flapping", 100 * time.Millisecond, true},
		{"stored for good", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startNet(t, Config{Seed: 9, Nodes: 6, Torrents: 1, Dead: 2, SearchEvery: -1, Reannounce: -1, DeadFlap: tc.flap})
			var dead [][20]byte
			for _, tor := range n.Torrents() {
				if tor.Dead {
					dead = append(dead, tor.InfoHash)
				}
			}
			gone := map[[20]byte]bool{}
			back := map[[20]byte]bool{}
			// Flapping, polled until every dead hash was seen gone and
			// back (go test's -timeout bounds it: a loaded machine may
			// take more than the dozens of flaps of a few seconds);
			// stored for good, watched for 3 s, dozens of flaps.
			end := time.Now().Add(3 * time.Second)
			for (tc.back || time.Now().Before(end)) && len(back) < len(dead) {
				stored := n.StoredHashes()
				for _, h := range dead {
					if !stored[h] {
						gone[h] = true
					} else if gone[h] {
						back[h] = true
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := len(back) == len(dead); got != tc.back {
				t.Errorf("every dead hash dropped and stored again: %v, want %v (dropped %d, back %d of %d)",
					got, tc.back, len(gone), len(back), len(dead))
			}
			if !tc.back && len(gone) > 0 {
				t.Errorf("%d dead hashes left the stores without DeadFlap", len(gone))
			}
		})
	}
}

// TestDeadPeerPortStaysTaken: a dead hash's peer must refuse connections
// for the testnet's life. Its port was a closed seeder's, free for any
// listener started later to take (a badpeers peer did, and fetch got a
// handshake from a "dead" peer: TestMixedRunThroughDHT under load).
func TestDeadPeerPortStaysTaken(t *testing.T) {
	n := startNet(t, Config{Seed: 17, Nodes: 4, Torrents: 1, Dead: 2, SearchEvery: -1, Reannounce: -1})
	for _, tor := range n.Torrents() {
		if !tor.Dead {
			continue
		}
		ln, err := net.Listen("tcp4", tor.Seeders[0])
		if err == nil {
			ln.Close()
			t.Fatalf("dead hash %x: another listener could take its peer's port %s", tor.InfoHash, tor.Seeders[0])
		}
		if c, err := net.Dial("tcp4", tor.Seeders[0]); err == nil {
			c.Close()
			t.Fatalf("dead hash %x: its peer %s accepts connections", tor.InfoHash, tor.Seeders[0])
		}
	}
}
