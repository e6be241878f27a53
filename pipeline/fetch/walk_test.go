package fetch

import (
	"context"
	"runtime"
	"testing"

	"github.com/infohash/infohash/tools/testnet"
)

// TestWalkOutlivesStaleStall: a traversal operation runs before its
// starting nodes are added, and finding nothing to query it offers
// "stalled". On a loaded machine that offer was still pending when
// AnnounceTraversal began to wait for the stall, which stopped the
// lookup before any node answered (local_error for a hash with peers or
// none: TestMixedRunThroughDHT failed so under load). Here the walk's end
// is watched while the operation offers such stalls, before any node is
// added; the walk must still ask the nodes and find the seeders.
func TestWalkOutlivesStaleStall(t *testing.T) {
	n, f := quietNet(t, testnet.Config{Nodes: 8, Seeders: 1, Torrents: 2, Seed: 3})
	for i, tor := range n.Torrents() {
		w := newWalk(f.dht.s, tor.InfoHash)
		nodes, err := f.dht.s.TraversalStartingNodes()
		if err != nil || len(nodes) == 0 {
			t.Fatalf("torrent %d: starting nodes %v: %v", i, nodes, err)
		}
		// The operation offers a stall for as long as it has no node
		// (take one to be sure it runs): watch for the end, and let the
		// watcher run, while it goes on offering them.
		<-w.op.Stalled()
		w.run(len(nodes))
		for i := 0; i < 1000 && !isDone(w.op.Stopped()); i++ {
			runtime.Gosched()
		}
		w.op.AddNodes(nodes)
		found := map[string]bool{}
		for pv := range w.peers {
			for _, p := range pv.Peers {
				found[p.String()] = true
			}
		}
		st := w.stats()
		if st.NumResponses == 0 {
			t.Fatalf("torrent %d: the walk ended with %d of %d nodes queried and none answering",
				i, st.NumAddrsTried, len(nodes))
		}
		for _, s := range tor.Seeders {
			if !found[s] {
				t.Errorf("torrent %d: walk found peers %v, want seeder %s (%d nodes answered)", i, found, s, st.NumResponses)
			}
		}
	}
}

// TestLookupStopsWithItsContext: a lookup whose context ends stops its
// walk and ends, whether or not its nodes have answered.
func TestLookupStopsWithItsContext(t *testing.T) {
	n, f := quietNet(t, testnet.Config{Nodes: 4, Seeders: 1, Torrents: 1, Seed: 5})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lr := f.dht.lookup(ctx, n.Torrents()[0].InfoHash)
	<-lr.done // go test -timeout bounds a lookup that never ends
	if lr.err != nil {
		t.Fatalf("lookup: %v", lr.err)
	}
}

// quietNet starts a loopback testnet of c whose nodes neither search nor
// reannounce (nothing queries but the test), stopped with the test, and
// a fetcher bootstrapped from it.
func quietNet(t *testing.T, c testnet.Config) (*testnet.Net, *Fetcher) {
	t.Helper()
	c.SearchEvery, c.Reannounce = -1, -1
	n, err := testnet.Start(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	o := testOptions()
	o.Bootstrap = n.BootstrapAddrs()
	return n, newFetcher(t, o)
}

// isDone reports whether done is closed.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
