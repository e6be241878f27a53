// Command loadgen sends get_peers/announce_peer load to a DHT node and
// prints what it sent as JSON on stdout:
//
//	loadgen --target 127.0.0.1:6881 --rate 50000 --count 1000000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/infohash/infohash/tools/loadgen"
)

func main() {
	var cfg loadgen.Config
	flag.StringVar(&cfg.Target, "target", "127.0.0.1:6881", "the DHT node under test")
	flag.Float64Var(&cfg.Rate, "rate", 50000, "queries per second")
	flag.Int64Var(&cfg.Count, "count", 500000, "queries to send (0: --duration decides)")
	flag.DurationVar(&cfg.Duration, "duration", 0, "send for this long (0: --count decides)")
	flag.IntVar(&cfg.Senders, "senders", 4, "source sockets")
	flag.IntVar(&cfg.AnnounceEvery, "announce-every", 4, "every n-th query is an announce_peer (0: none)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "varies the infohashes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := loadgen.Run(ctx, cfg)
	json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
