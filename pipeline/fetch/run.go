package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// jobRow is how fetch reads jobs: only info_hash is required, so a plain
// list of hashes is a valid input; the planner's columns are used when
// present.
type jobRow struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	HashType   int8        `parquet:"hash_type,optional,int(8)"`
	Attempt    int32       `parquet:"attempt,optional"`
	LeaseID    string      `parquet:"lease_id,optional"`
	LeaseUntil int64       `parquet:"lease_until,optional,timestamp(millisecond)"`
	Peers      []string    `parquet:"peers,list"`
	AvoidPeers []string    `parquet:"avoid_peers,list"`
}

func (r jobRow) job() schema.Job {
	return schema.Job{InfoHash: r.InfoHash, HashType: r.HashType, Attempt: r.Attempt, LeaseID: r.LeaseID,
		LeaseUntil: r.LeaseUntil, Peers: r.Peers, AvoidPeers: r.AvoidPeers}
}

// resultRowGroup is the number of results per Parquet row group.
const resultRowGroup = 1024

// errDeadline is the cause of a run stopped by Options.Deadline.
var errDeadline = errors.New("run deadline reached")

// Run fetches the metadata of every job in opts.Input and writes one
// result per attempted job to opts.Output. When ctx ends (SIGINT/SIGTERM)
// or the deadline passes it stops starting jobs, abandons the ones in
// flight, commits the finished results and returns an interrupted (ctx)
// or partial (deadline) error. Jobs whose lease had expired are not
// attempted and also make the run partial. Unreadable input is a bad-input
// error and commits nothing.
func Run(ctx context.Context, opts Options) (Stats, error) {
	if err := opts.Validate(); err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: %w", err))
	}
	in, err := rowio.Open[jobRow](opts.Input, opts.Stdin)
	if err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: %w", err))
	}
	defer in.Close()
	if opts.AvoidPeers, err = jobsAvoidList(in, opts.AvoidPeers); err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: jobs: %w", err))
	}
	// Results carry info dictionaries (tens of KB each): small row groups
	// keep the writer from holding a whole run in memory.
	out, err := rowio.Create[schema.Result](opts.Output, opts.Stdout, parquet.MaxRowsPerRowGroup(resultRowGroup))
	if err != nil {
		return Stats{}, fmt.Errorf("fetch: %w", err)
	}
	f, err := NewFetcher(ctx, opts)
	if err != nil {
		out.Abort()
		return Stats{}, err
	}
	defer f.Close()
	stats, err := runJobs(ctx, f, in, out)
	if err != nil {
		out.Abort()
		return stats, err
	}
	if cerr := out.Close(); cerr != nil {
		return stats, fmt.Errorf("fetch: %w", cerr)
	}
	switch {
	case ctx.Err() != nil:
		return stats, exitcode.With(exitcode.Interrupted, fmt.Errorf("fetch: interrupted: %d results written, %d jobs unfinished", stats.Attempted, stats.Unfinished))
	case stats.Unfinished > 0 || stats.LeaseExpired > 0:
		return stats, fmt.Errorf("fetch: %d results written, %d jobs unfinished, %d leases expired: %w",
			stats.Attempted, stats.Unfinished, stats.LeaseExpired, exitcode.ErrPartial)
	}
	return stats, nil
}

type jobSource interface {
	Read([]jobRow) (int, error)
}

type resultSink interface {
	Write([]schema.Result) error
}

// runJobs runs the worker pool: one reader, Concurrency workers, one
// writer batching results. It returns a non-nil error only for bad input
// or a failed write, in which case the output must be discarded.
func runJobs(ctx context.Context, f *Fetcher, in jobSource, out resultSink) (Stats, error) {
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	if f.opts.Deadline > 0 {
		t := time.AfterFunc(f.opts.Deadline, func() { stopRun(errDeadline) })
		defer t.Stop()
	}
	jobs := make(chan schema.Job, f.opts.Concurrency)
	results := make(chan schema.Result, f.opts.Concurrency)
	var readErr, writeErr error
	var wg sync.WaitGroup
	go func() { // reader
		defer close(jobs)
		readErr = readJobs(runCtx, in, jobs, f.stats)
		if readErr != nil {
			stopRun(readErr)
		}
	}()
	for range f.opts.Concurrency {
		wg.Go(func() {
			for job := range jobs {
				switch {
				case runCtx.Err() != nil:
					f.stats.unfinished.Add(1)
				case job.LeaseUntil != 0 && time.Now().UnixMilli() >= job.LeaseUntil:
					f.stats.expired.Add(1)
				default:
					if res, ok := f.Fetch(runCtx, job); ok {
						results <- res
					} else {
						f.stats.unfinished.Add(1)
					}
				}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	stopProgress := f.progress(runCtx)
	writeErr = writeResults(results, out, func(err error) { stopRun(err) })
	stopProgress()
	st := f.Stats()
	if readErr != nil {
		return st, exitcode.BadInput(fmt.Errorf("fetch: %w", readErr))
	}
	if writeErr != nil {
		return st, fmt.Errorf("fetch: %w", writeErr)
	}
	return st, nil
}

func readJobs(ctx context.Context, in jobSource, jobs chan<- schema.Job, st *counters) error {
	buf := make([]jobRow, 256)
	for {
		n, err := in.Read(buf)
		for _, r := range buf[:n] {
			st.jobs.Add(1)
			select {
			case jobs <- r.job():
			case <-ctx.Done():
				st.unfinished.Add(1)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// writeResults writes results in batches, at least once a second. After a
// write error it keeps draining (so workers never block) and reports it.
func writeResults(results <-chan schema.Result, out resultSink, onErr func(error)) error {
	const batch = 256
	buf := make([]schema.Result, 0, batch)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var werr error
	flush := func() {
		if len(buf) > 0 && werr == nil {
			if werr = out.Write(buf); werr != nil {
				onErr(werr)
			}
		}
		clear(buf)
		buf = buf[:0]
	}
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return werr
			}
			buf = append(buf, r)
			if len(buf) == batch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// progress logs the counters every opts.Progress until the returned stop
// is called.
func (f *Fetcher) progress(ctx context.Context) func() {
	if f.opts.Logger == nil || f.opts.Progress <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(f.opts.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s := f.Stats()
				f.opts.Logger.Info("fetch: progress", "jobs", s.Jobs, "attempted", s.Attempted,
					"verified", s.Verified, "verified_per_sec", int(s.VerifiedPerSec), "connects", s.Connects)
			}
		}
	}()
	return func() { close(done) }
}
