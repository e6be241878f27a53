// Command stategen writes a synthetic dataset state for benchmarks of
// plan-retries and merge: N hashes over the 256 prefix partitions, a mix of
// never-tried, failed (at every step of the schedule, due and not due) and
// fetched hashes, and some cold ones in cold files, with a Bloom filter per
// partition as dedup leaves them.
//
//	go run ./tools/stategen -data /tmp/bench -n 10000000 -now 2026-03-01T00:00:00Z
//
// With -jobs it instead answers a plan-retries jobs file with fetch
// results, as a fetch that never succeeds would: mostly no_peers, some
// peer-level failures naming the peers that failed.
//
//	go run ./tools/stategen -jobs jobs.parquet -results results.parquet
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
	"github.com/infohash/infohash/pipeline/schedule"
	"github.com/infohash/infohash/tools/stategen/genstate"
)

func main() {
	data := flag.String("data", "", "dataset `DIR` to create (must not exist)")
	n := flag.Int64("n", 1_000_000, "number of hashes")
	nowS := flag.String("now", "2026-03-01T00:00:00Z", "the benchmark's planning time (RFC 3339)")
	seed := flag.Uint64("seed", 1, "random seed")
	workers := flag.Int("workers", 2, "partitions generated in parallel")
	jobs := flag.String("jobs", "", "answer this jobs `FILE` with results instead")
	results := flag.String("results", "results.parquet", "results `FILE` written for -jobs")
	flag.Parse()
	if *jobs != "" {
		if err := answer(*jobs, *results, *seed); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *data == "" {
		log.Fatal("stategen: -data DIR is required")
	}
	if _, err := os.Stat(*data); err == nil {
		log.Fatalf("stategen: %s exists", *data)
	}
	now, err := time.Parse(time.RFC3339, *nowS)
	if err != nil {
		log.Fatalf("stategen: -now: %v", err)
	}
	start := time.Now()
	if err := run(*data, *n, now.UnixMilli(), *seed, *workers); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "stategen: %d hashes in %s\n", *n, time.Since(start).Round(time.Millisecond))
}

func run(dir string, n, now int64, seed uint64, workers int) error {
	ctx := context.Background()
	d, err := dataset.Open(ctx, dir, dataset.OpenOptions{Create: true})
	if err != nil {
		return err
	}
	defer d.Close()
	if err := schedule.Save(dir, schedule.Default()); err != nil {
		return err
	}
	tx, err := d.Begin()
	if err != nil {
		return err
	}
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				p := next
				next++
				mu.Unlock()
				if p >= 256 {
					return
				}
				per := n / 256
				if int64(p) < n%256 {
					per++
				}
				hot, cold := partition(byte(p), per, now, seed)
				key := fmt.Sprintf("%02x", p)
				files, err := schedule.WriteTiers(nil, hot, cold, func(name string, rows []schema.State) (dataset.FileInfo, error) {
					return write(tx, key, name, rows)
				})
				if err == nil && len(files) > 0 {
					err = dedup.StageBloom(tx, key, hashesOf(hot, cold), dedup.DefaultOptions().BloomFP)
				}
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				tx.SetPartition(dataset.TableState, key, files) // Tx locks its own
			}
		}()
	}
	wg.Wait()
	if first != nil {
		tx.Abort()
		return first
	}
	_, err = tx.Commit(ctx, dataset.CommitOptions{Writer: "stategen"})
	return err
}

// partition generates the hashes of prefix p, sorted.
func partition(p byte, n, now int64, seed uint64) (hot, cold []schema.State) {
	rows := genstate.Rows(rand.New(rand.NewPCG(seed, uint64(p))), p, int(n), now)
	slices.SortFunc(rows, func(a, b schema.State) int { return slices.Compare(a.InfoHash[:], b.InfoHash[:]) })
	for _, st := range rows {
		if st.Tier == schema.TierCold {
			cold = append(cold, st)
		} else {
			hot = append(hot, st)
		}
	}
	return hot, cold
}

// hashesOf lists the hashes of a partition's rows, hot and cold: what
// its Bloom filter holds.
func hashesOf(hot, cold []schema.State) []schema.Hash {
	out := make([]schema.Hash, 0, len(hot)+len(cold))
	for _, rows := range [][]schema.State{hot, cold} {
		for i := range rows {
			out = append(out, rows[i].InfoHash)
		}
	}
	return out
}

// write stages rows as the stages write state files (statecol's column
// writer: Snappy and delta-packed columns), so that a benchmark reads and
// splices files like a real dataset's, not parquet-go's zstd ones.
func write(tx *dataset.Tx, key, name string, rows []schema.State) (dataset.FileInfo, error) {
	return dataset.WriteStagedAs(tx, dataset.TableState, key, name, rows)
}

// answer writes a failed result for every job of the jobs file.
func answer(jobsPath, resultsPath string, seed uint64) error {
	r, err := rowio.Open[schema.Job](jobsPath, nil)
	if err != nil {
		return err
	}
	jobs, err := r.ReadAll()
	r.Close()
	if err != nil {
		return err
	}
	rnd := rand.New(rand.NewPCG(seed, 99))
	rs := make([]schema.Result, len(jobs))
	for i, j := range jobs {
		at := j.LeaseUntil - time.Hour.Milliseconds()
		res := schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
			AttemptedAt: at, Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}
		if rnd.IntN(10) == 0 {
			res.Outcome = schema.OutcomeNoUTMetadata
			addr := fmt.Sprintf("10.%d.%d.%d:6881", rnd.IntN(256), rnd.IntN(256), rnd.IntN(256))
			res.PeerFailures = []schema.PeerFailure{{Addr: addr, Class: res.Outcome, At: at}}
			res.PeersFound, res.PeersTried = 1, 1
		}
		rs[i] = res
	}
	w, err := rowio.Create[schema.Result](resultsPath, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rs); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
