package fetch

import (
	"context"
	"testing"

	"github.com/infohash/infohash/tools/testnet"
)

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
