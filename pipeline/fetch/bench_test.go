package fetch

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

// BenchmarkFetch fetches b.N torrents (10-30 KB of metadata each) from a
// loopback swarm of 4 good peers at concurrency 1000 and reports verified
// metadata per second. "direct" gives each job its peer; "dht" finds every
// peer through a 16-node loopback testnet. The swarm runs in the same
// process: scripts/bench-fetch.sh measures fetch alone, with its RSS.
func BenchmarkFetch(b *testing.B) {
	for _, mode := range []string{"direct", "dht"} {
		b.Run(mode, func(b *testing.B) {
			var n *testnet.Net
			if mode == "dht" {
				var err error
				n, err = testnet.Start(context.Background(), testnet.Config{Nodes: 16, Seeders: 1, Torrents: 1, SearchEvery: -1, Reannounce: -1})
				if err != nil {
					b.Fatal(err)
				}
				defer n.Close()
			}
			jobs := benchSwarm(b, n, b.N)
			o := testOptions()
			o.Timeout, o.PeerTimeout, o.ConnectTimeout = 30*time.Second, 30*time.Second, 5*time.Second
			if n != nil {
				o.Bootstrap = n.BootstrapAddrs()
			}
			f, err := NewFetcher(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ResetTimer()
			start := time.Now()
			ok := fetchAll(f, jobs, 1000)
			b.ReportMetric(float64(ok)/time.Since(start).Seconds(), "verified/s")
			if ok != len(jobs) {
				b.Fatalf("%d of %d verified", ok, len(jobs))
			}
		})
	}
}

// benchSwarm starts 4 good peers serving count torrents and returns the
// jobs; with a testnet the peers are announced and the jobs list none.
func benchSwarm(tb testing.TB, n *testnet.Net, count int) []schema.Job {
	tb.Helper()
	var jobs []schema.Job
	for p := range 4 {
		peer, err := badpeers.Start(badpeers.Good, badpeers.Config{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { peer.Close() })
		var ts []badpeers.Torrent
		for i := p; i < count; i += 4 {
			t := badpeers.NewTorrent(uint64(i), 1+i%7, 500+(i*37)%1000)
			ts = append(ts, t)
			j := schema.Job{InfoHash: t.InfoHash}
			if n == nil {
				j.Peers = []string{peer.Addr()}
			}
			jobs = append(jobs, j)
		}
		peer.Add(ts...)
		if n != nil {
			if err := badpeers.Plant(context.Background(), n, peer, ts); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return jobs
}

// fetchAll runs jobs through f with the given concurrency and counts ok.
func fetchAll(f *Fetcher, jobs []schema.Job, concurrency int) int {
	ch := make(chan schema.Job)
	var mu sync.Mutex
	ok, failed := 0, 0
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for j := range ch {
				r, _ := f.Fetch(context.Background(), j)
				mu.Lock()
				if r.Outcome == schema.OutcomeOK {
					ok++
				} else if failed++; failed <= 5 {
					fmt.Fprintf(os.Stderr, "fetch %x: %s (%s)\n", j.InfoHash, r.Outcome, r.Detail)
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return ok
}

// BenchmarkDHTStart measures the time from starting a fetcher to the
// first peers of a lookup, on a 16-node loopback testnet: "cold" joins
// through --bootstrap, "warm" starts from the nodes a previous run saved
// in --dht-state. "ok" bootstraps through all 16 nodes; "silent" through
// one of them and three routers that never answer (as some of the public
// routers do not): a cold bootstrap waits out its query to each one it
// asks (2 s), a warm start asks none.
func BenchmarkDHTStart(b *testing.B) {
	n, err := testnet.Start(context.Background(), testnet.Config{Nodes: 16, Seeders: 1, Torrents: 1, Seed: 3, SearchEvery: -1, Reannounce: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	tr := n.Torrents()[0]
	for _, routers := range []string{"ok", "silent"} {
		boot := n.BootstrapAddrs()
		if routers == "silent" {
			boot = boot[:1]
			for range 3 {
				a, _ := blackhole(b)
				boot = append([]string{a}, boot...)
			}
		}
		for _, mode := range []string{"cold", "warm"} {
			b.Run(mode+"/"+routers, func(b *testing.B) {
				o := testOptions()
				o.Bootstrap = boot
				o.DHTState = b.TempDir()
				if mode == "warm" {
					_, f := firstPeers(b, o, tr.InfoHash, tr.Seeders[0])
					f.Close()
				}
				var total time.Duration
				for range b.N {
					if mode == "cold" {
						o.DHTState = b.TempDir()
					}
					took, f := firstPeers(b, o, tr.InfoHash, tr.Seeders[0])
					f.Close()
					total += took
				}
				b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-peers")
			})
		}
	}
}
