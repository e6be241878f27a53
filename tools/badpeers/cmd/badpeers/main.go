// Command badpeers runs a loopback swarm for fetch benchmarks and demos:
// good peers serving generated torrents, optionally one peer of every
// misbehaviour, optionally announced through a loopback DHT testnet. It
// writes the matching fetch jobs as Parquet, prints one line on stdout
// (the DHT bootstrap list, or "-" without --dht) once everything is up,
// and runs until --duration passes or it gets SIGINT/SIGTERM.
//
//	badpeers --torrents 5000 --peers 4 --jobs jobs.parquet &
//	infohash fetch jobs.parquet -o results.parquet --no-dht --dht-listen 127.0.0.1:0 --concurrency 1000
//
// With --dht the jobs have no peers column values and fetch must find the
// peers through the DHT (--bootstrap "$(the printed line)").
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

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
	"github.com/infohash/infohash/tools/testnet"
)

type config struct {
	torrents, peers, badPer int
	jobs, truth             string
	useDHT                  bool
	duration                time.Duration
	seed                    uint64
}

func main() {
	var c config
	flag.IntVar(&c.torrents, "torrents", 1000, "torrents served by the good peers")
	flag.IntVar(&c.peers, "peers", 4, "good peers (each serves every torrent; jobs rotate over them)")
	flag.IntVar(&c.badPer, "bad", 0, "also plant one peer of every misbehaviour, serving this many hashes each")
	flag.StringVar(&c.jobs, "jobs", "jobs.parquet", "write the fetch jobs to this Parquet file")
	flag.StringVar(&c.truth, "truth", "", "with --dht, write the testnet ground truth here")
	flag.BoolVar(&c.useDHT, "dht", false, "announce every peer through a loopback DHT testnet; jobs list no peers")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "stop after this long (0: only on a signal)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed for the generated torrents")
	flag.Parse()
	if flag.NArg() > 0 || c.torrents < 0 || c.peers < 1 {
		fmt.Fprintln(os.Stderr, "badpeers: bad arguments; see -h")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "badpeers:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.duration)
		defer cancel()
	}
	var net *testnet.Net
	if c.useDHT {
		var err error
		net, err = testnet.Start(ctx, testnet.Config{Nodes: 16, Seeders: 1, Torrents: 1, Seed: c.seed,
			SearchEvery: -1, Reannounce: -1})
		if err != nil {
			return err
		}
		defer net.Close()
	}
	ts := make([]badpeers.Torrent, c.torrents)
	for i := range ts {
		ts[i] = badpeers.NewTorrent(c.seed<<32|uint64(i), 1+i%7, 500+(i*37)%1000)
	}
	var jobs []schema.Job
	for p := range c.peers {
		peer, err := badpeers.Start(badpeers.Good, badpeers.Config{})
		if err != nil {
			return err
		}
		defer peer.Close()
		peer.Add(ts...)
		var mine []badpeers.Torrent
		for i := p; i < len(ts); i += c.peers {
			mine = append(mine, ts[i])
			j := schema.Job{InfoHash: ts[i].InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: "bench"}
			if !c.useDHT {
				j.Peers = []string{peer.Addr()}
			}
			jobs = append(jobs, j)
		}
		if net != nil {
			if err := badpeers.Plant(ctx, net, peer, mine); err != nil {
				return err
			}
		}
	}
	if c.badPer > 0 {
		bad, err := plantBad(ctx, c, net)
		if err != nil {
			return err
		}
		jobs = append(jobs, bad...)
	}
	if err := writeJobs(c.jobs, jobs); err != nil {
		return err
	}
	line := "-"
	if net != nil {
		line = strings.Join(net.BootstrapAddrs(), ",")
		if c.truth != "" {
			if err := testnet.WriteTruthFile(c.truth, net.Truth()); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "badpeers: %d good peers, %d torrents, %d jobs in %s\n", c.peers, len(ts), len(jobs), c.jobs)
	fmt.Println(line)
	<-ctx.Done()
	return nil
}

// plantBad starts one peer of every misbehaviour and returns jobs for
// c.badPer hashes each.
func plantBad(ctx context.Context, c config, net *testnet.Net) ([]schema.Job, error) {
	var jobs []schema.Job
	for bi, b := range badpeers.Behaviours()[1:] {
		p, err := badpeers.Start(b, badpeers.Config{})
		if err != nil {
			return nil, err
		}
		go func() { <-ctx.Done(); p.Close() }()
		ts := make([]badpeers.Torrent, c.badPer)
		for i := range ts {
			ts[i] = badpeers.NewTorrent(c.seed<<40|uint64(bi+1)<<20|uint64(i), 2, 40)
			j := schema.Job{InfoHash: ts[i].InfoHash, HashType: schema.HashV1, Attempt: 1, LeaseID: string(b)}
			if net == nil {
				j.Peers = []string{p.Addr()}
			}
			jobs = append(jobs, j)
		}
		if net != nil {
			if err := badpeers.Plant(ctx, net, p, ts); err != nil {
				return nil, err
			}
		}
	}
	return jobs, nil
}

func writeJobs(path string, jobs []schema.Job) error {
	w, err := rowio.Create[schema.Job](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(jobs); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
