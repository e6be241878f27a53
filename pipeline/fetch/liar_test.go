package fetch

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtwalk"
)

// addrs returns n addresses of ip, ports from first up.
func addrs(ip string, first, n int) []netip.AddrPort {
	a := netip.MustParseAddr(ip)
	out := make([]netip.AddrPort, n)
	for i := range out {
		out[i] = netip.AddrPortFrom(a, uint16(first+i))
	}
	return out
}

// TestLyingNodeIsBounded: a DHT node whose get_peers reply lists nodes or
// values by the thousand (a datagram holds 2,500 nodes or 8,000 values)
// makes a lookup query at most dhtwalk.MaxNodesPerReply of its nodes and
// take at most dhtwalk.MaxValuesPerReply of its values, and an attempt
// dial at most maxPortsPerIP ports of one public address. Each node
// listed used to be queried (the traversal queries every node while
// fewer than K have answered), and each value queued and dialled: a
// liar could point a fetch at a victim's ports by the thousand. The
// library's own traversals (its bootstrap, here) are bounded alike: the
// DHT node's socket cuts the nodes of what it reads (heardConn). The
// guard refuses every datagram and dial but those to the liar, so
// nothing leaves the host (nor reaches another loopback socket).
func TestLyingNodeIsBounded(t *testing.T) {
	tests := []struct {
		name         string
		values       []netip.AddrPort
		nodes        []netip.AddrPort
		everyAnswer  bool  // the liar lists nodes in every answer, not only to get_peers
		queried      int   // at most this many of nodes queried
		found        int32 // peers_found
		outOfReach   int64
		wantOutcome  string
		wantFailures int // peer_failures
	}{
		{name: "nodes by the thousand", nodes: addrs("127.0.0.1", 20000, 1500),
			queried: dhtwalk.MaxNodesPerReply, wantOutcome: schema.OutcomeNoPeers},
		{name: "nodes by the thousand to the bootstrap too", nodes: addrs("127.0.0.1", 20000, 1500), everyAnswer: true,
			queried: dhtwalk.MaxNodesPerReply, wantOutcome: schema.OutcomeNoPeers},
		{name: "values by the thousand", values: addrs("127.0.0.1", 20000, 1000),
			found: dhtwalk.MaxValuesPerReply, wantOutcome: schema.OutcomeConnectFailed, wantFailures: dhtwalk.MaxValuesPerReply},
		{name: "ports of one public address", values: addrs("203.0.113.9", 1, 50),
			found: maxPortsPerIP, outOfReach: 50 - maxPortsPerIP, wantOutcome: schema.OutcomeConnectFailed, wantFailures: maxPortsPerIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			liar := startLiar(t, !tt.everyAnswer, tt.values, tt.nodes...)
			var mu sync.Mutex
			queried := map[string]bool{}
			o := testOptions()
			o.Bootstrap = []string{liar}
			o.guard = func(network, addr string) error {
				if network == "udp" && addr == liar {
					return nil
				}
				if network == "udp" {
					mu.Lock()
					queried[addr] = true
					mu.Unlock()
				}
				return errors.New("refused by the test's guard")
			}
			f := newFetcher(t, o)
			r, _ := f.Fetch(context.Background(), schema.Job{InfoHash: schema.Hash{0x11}})
			mu.Lock()
			n := len(queried)
			mu.Unlock()
			if tt.nodes != nil && (n == 0 || n > tt.queried) {
				t.Errorf("the DHT node queried %d of the %d nodes listed, want 1 to %d", n, len(tt.nodes), tt.queried)
			}
			if r.Outcome != tt.wantOutcome || r.PeersFound != tt.found || len(r.PeerFailures) != tt.wantFailures {
				t.Errorf("outcome %s (%s), found %d, %d peer failures; want %s, %d found, %d failures",
					r.Outcome, r.Detail, r.PeersFound, len(r.PeerFailures), tt.wantOutcome, tt.found, tt.wantFailures)
			}
			if st := f.Stats(); st.PeersOutOfReach != tt.outOfReach {
				t.Errorf("peers_out_of_reach %d, want %d", st.PeersOutOfReach, tt.outOfReach)
			}
		})
	}
}
