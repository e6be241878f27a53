// Command schedsim runs the real infohash binary through many simulated
// passes (--now moves the clock) and measures the retry scheduler against
// its design: N hashes, each failing for ever with one class (no_peers,
// connect_failed, no_extension, rejected, invalid_metadata, hash_mismatch:
// the hash's last byte mod 6), planned by plan-retries --limit, answered by
// a synthetic fetch and folded in by merge, every --every for --days.
// Along the way a fetch crashes (its results merged late, after the
// hashes were planned again), the scheduler is down for a while and a
// flood of new hashes arrives as it comes back, and some cold hashes are
// sighted again. It prints per-pass counts (-tsv) and a summary: wake-ups
// per hour against their neighbourhood (jitter), how long after its
// next_retry each hash was planned (nobody starves), the new pool's share
// under the backlog, and whether any hash was lost or an attempt counted
// twice. It exits 1 if a property fails.
//
//	go build -o bin/infohash ./cmd/infohash
//	go run ./tools/schedsim -bin bin/infohash -n 50000 -days 60 -limit 2000
//
// scripts/sim-schedule.sh runs it. Everything is seeded: the same flags
// give the same passes.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"
)

func main() { os.Exit(run()) }

// run parses the flags, runs the simulation and returns the exit code:
// 0 when every property held, 1 otherwise.
func run() int {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/infohash", "the infohash `BINARY` to run")
	flag.StringVar(&c.work, "work", "", "work `DIR` (default: a temporary one, removed at the end)")
	flag.IntVar(&c.n, "n", 50000, "hashes at the start")
	flag.IntVar(&c.days, "days", 60, "simulated days")
	flag.IntVar(&c.limit, "limit", 2000, "plan-retries --limit")
	flag.DurationVar(&c.every, "every", time.Hour, "time between passes")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the hashes and peers")
	flag.DurationVar(&c.crashAt, "crash-at", 72*time.Hour, "the pass at or after this whose fetch crashes (0: none)")
	flag.DurationVar(&c.downFrom, "down-from", 6*24*time.Hour, "the scheduler is down from this time ...")
	flag.DurationVar(&c.downTo, "down-to", 10*24*time.Hour, "... to this one (equal: never down)")
	flag.IntVar(&c.flood, "flood", 10000, "new hashes arriving when the scheduler comes back")
	flag.DurationVar(&c.sightAt, "sight-at", 30*24*time.Hour, "when cold hashes are sighted again")
	flag.IntVar(&c.sight, "sight", 200, "cold hashes sighted then")
	flag.StringVar(&c.tsv, "tsv", "", "write per-pass counts to this `FILE`")
	flag.StringVar(&c.policy, "policy", "", "`SETTINGS` for infohash policy set before the first pass (e.g. jitter=0, to see what jitter prevents)")
	flag.StringVar(&c.start, "start", "2026-01-01T00:00:00Z", "the simulated clock's start (RFC 3339)")
	flag.Parse()
	t0, err := time.Parse(time.RFC3339, c.start)
	if err != nil {
		log.Printf("schedsim: -start: %v", err)
		return 2
	}
	c.t0 = t0.UnixMilli()
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "schedsim-"); err != nil {
			log.Print(err)
			return 1
		}
		defer os.RemoveAll(c.work)
	}
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		log.Print(err)
		return 1
	}
	s := newSim(c)
	began := time.Now()
	if err := s.run(); err != nil {
		log.Print(err)
		return 1
	}
	failed := s.report(os.Stdout)
	fmt.Printf("wall time %s\n", time.Since(began).Round(time.Second))
	if failed {
		return 1
	}
	return 0
}
