// Command testnet runs the loopback DHT testnet until --duration passes or
// it gets SIGINT/SIGTERM, writing the ground truth to --truth as soon as
// the net is up (and again, with late additions, when it stops). Its one
// line of stdout is the comma-separated bootstrap list:
//
//	testnet --seed 1 --duration 60s --truth /tmp/truth.json &
//	infohash capture --bootstrap "$(jq -r '.bootstrap|join(",")' /tmp/truth.json)" ...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

func main() {
	d := testnet.DefaultConfig()
	cfg := d
	flag.IntVar(&cfg.Nodes, "nodes", d.Nodes, "DHT nodes")
	flag.IntVar(&cfg.Seeders, "seeders", d.Seeders, "torrent clients seeding the announced torrents")
	flag.IntVar(&cfg.Torrents, "torrents", d.Torrents, "torrents seeded and announced")
	flag.IntVar(&cfg.Searched, "searched", d.Searched, "hashes looked up with get_peers that nobody has")
	flag.IntVar(&cfg.Dead, "dead", d.Dead, "hashes announced once whose peer then goes away")
	flag.Uint64Var(&cfg.Seed, "seed", d.Seed, "seed for node IDs, torrents and hashes")
	flag.DurationVar(&cfg.Interval, "interval", d.Interval, "BEP 51 interval the nodes report")
	flag.DurationVar(&cfg.SearchEvery, "search-every", d.SearchEvery, "how often searchers look up hashes (negative: never)")
	flag.DurationVar(&cfg.Reannounce, "reannounce", d.Reannounce, "how often seeders announce again (negative: never)")
	flag.DurationVar(&cfg.DeadFlap, "dead-flap", d.DeadFlap, "every this long drop a dead hash from the nodes' stores or announce it again, in turn (0: never)")
	duration := flag.Duration("duration", time.Minute, "stop after this long (0: only on a signal)")
	truthPath := flag.String("truth", "testnet-truth.json", "where to write the ground-truth JSON")
	flag.IntVar(&badPerBehaviour, "bad-peers", 0, "also plant a misbehaving peer of every kind (tools/badpeers), each the only peer of this many hashes")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "testnet: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(cfg, *duration, *truthPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// badPerBehaviour is --bad-peers.
var badPerBehaviour int

// plantBadPeers starts one peer of every misbehaviour (and a good one, and
// one that serves only over MSE) and announces per hashes for each
// through the DHT, recorded in the truth.
func plantBadPeers(ctx context.Context, n *testnet.Net, per int, seed uint64) ([]*badpeers.Peer, error) {
	var peers []*badpeers.Peer
	for i, b := range append(badpeers.Behaviours(), badpeers.RequireMSE) {
		p, err := badpeers.Start(b, badpeers.Config{})
		if err != nil {
			return peers, err
		}
		peers = append(peers, p)
		ts := make([]badpeers.Torrent, per)
		for j := range ts {
			ts[j] = badpeers.NewTorrent(seed*1000+uint64(i*100+j), 1+j%3, 4+j)
		}
		if err := badpeers.Plant(ctx, n, p, ts); err != nil {
			return peers, err
		}
	}
	return peers, nil
}

func run(cfg testnet.Config, duration time.Duration, truthPath string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	start := time.Now()
	n, err := testnet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer n.Close()
	if badPerBehaviour > 0 {
		peers, err := plantBadPeers(ctx, n, badPerBehaviour, cfg.Seed)
		if err != nil {
			return err
		}
		defer func() {
			for _, p := range peers {
				p.Close()
			}
		}()
	}
	truth := n.Truth()
	if err := testnet.WriteTruthFile(truthPath, truth); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "testnet: %d nodes, %d announced, %d dead, %d searched hashes up in %v; truth in %s\n",
		len(truth.Bootstrap), len(truth.Announced), len(truth.Dead), len(truth.Searched),
		time.Since(start).Round(time.Millisecond), truthPath)
	fmt.Println(strings.Join(truth.Bootstrap, ","))
	<-ctx.Done()
	fmt.Fprintf(os.Stderr, "testnet: stopping after %v (%d sample_infohashes answered)\n",
		time.Since(start).Round(time.Second), n.SampleQueries())
	return testnet.WriteTruthFile(truthPath, n.Truth())
}
