package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/plural"
)

// resultRowGroup is the number of results per Parquet row group.
const resultRowGroup = 1024

// errDeadline is the cause of a run stopped by Options.Deadline.
var errDeadline = errors.New("run deadline reached")

// Run fetches the metadata of every job in opts.Input and writes one
// result per attempted job to opts.Output. When ctx ends (SIGINT/SIGTERM)
// or the deadline passes it stops starting jobs, abandons the ones in
// flight, gives back the lease of every job it read and did not finish
// (a released row each: see schema.OutcomeReleased), commits and returns
// an interrupted (ctx) or partial (deadline) error. Jobs it did not read
// (the rest of the input past drainGrace) have no row: they count as
// unfinished, and their leases expire. Jobs whose lease had expired are
// neither attempted nor released and also make the run partial.
// Unreadable input is a bad-input error and commits nothing.
func Run(ctx context.Context, opts Options) (Stats, error) {
	// The deadline counts from here: waiting for the first jobs and the
	// DHT bootstrap are part of the run.
	startCtx := ctx // ends at the deadline too: the bootstrap is cut short
	if opts.Deadline > 0 {
		var cancel context.CancelFunc
		startCtx, cancel = context.WithDeadlineCause(ctx, time.Now().Add(opts.Deadline), errDeadline)
		defer cancel()
	}
	if opts.passDeadline != nil {
		var pass context.CancelCauseFunc
		startCtx, pass = context.WithCancelCause(startCtx)
		defer pass(nil)
		opts.passDeadline(func() { pass(errDeadline) })
	}
	if err := opts.Validate(); err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: %w", err))
	}
	// A stream of jobs (stdin, a FIFO) is read once the DHT state is
	// locked: a second fetch on it is refused before it takes a job from
	// the pipe or writes a byte. A jobs file, which can be read again, is
	// read first, so that one holding no job (an idle pass's plan) ends
	// the run before --dht-state is touched.
	stream := !isRegularFile(opts.Input)
	release := func() {}
	lock := func() error {
		r, err := lockStateFor(opts)
		if err == nil {
			release = r
		}
		return err
	}
	if stream {
		if err := lock(); err != nil {
			return Stats{}, err
		}
	}
	owned := false // by the Fetcher, whose Close releases it
	defer func() {
		if !owned {
			release()
		}
	}()
	in, err := openJobs(opts.Input, opts.Stdin, opts.Output)
	if err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: %w", err))
	}
	defer in.Close()
	if opts.AvoidPeers, err = jobsAvoidList(in, opts.AvoidPeers); err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: jobs: %w", err))
	}
	src, err := primeJobs(startCtx, in)
	if err != nil {
		return Stats{}, exitcode.BadInput(fmt.Errorf("fetch: %w", err))
	}
	if src.empty() {
		return runIdle(opts)
	}
	if !stream {
		if err := lock(); err != nil {
			return Stats{}, err
		}
	}
	out, err := createResults(opts)
	if err != nil {
		return Stats{}, fmt.Errorf("fetch: %w", err)
	}
	if err := out.Reserve(); err != nil { // no room even to start
		out.Abort()
		return Stats{}, fmt.Errorf("fetch: %w; no job attempted", err)
	}
	if !opts.DHTOn() && len(opts.Peers) == 0 && opts.Logger != nil {
		// Said once, before the first attempt: every job without peers
		// of its own will end local_error (see attempt.noSource).
		opts.Logger.Warn("fetch: " + opts.noDHTFlags() + " without --peer: only the jobs' own peers are tried; " +
			`a job with none ends local_error ("no peer source"), which merge holds against no hash`)
	}
	f, err := startFetcher(startCtx, opts, release)
	if err != nil {
		out.Abort()
		return Stats{}, err
	}
	owned = true
	defer f.Close()
	if f.dht != nil && opts.DHTState != "" && opts.StateSaver != nil {
		opts.StateSaver(f.saveState)
	}
	stats, err := runJobs(ctx, f, src, out, startCtx)
	if errors.Is(err, rowio.ErrOutputFull) {
		return closeFull(out, opts, stats, err)
	}
	if err != nil {
		out.Abort()
		return keptReleased(stats, opts), err
	}
	if cerr := out.Close(); cerr != nil {
		return keptReleased(stats, opts), fmt.Errorf("fetch: %w", cerr)
	}
	switch {
	case ctx.Err() != nil:
		return stats, exitcode.With(exitcode.Interrupted, fmt.Errorf("fetch: interrupted: %s", stats.stoppedShort()))
	case stats.Unfinished > 0 || stats.LeaseExpired > 0:
		return stats, fmt.Errorf("fetch: %s, %s expired%s: %w",
			stats.stoppedShort(), plural.Count(stats.LeaseExpired, "lease", "leases"), f.silentNote(stats, "; and "), exitcode.ErrPartial)
	case f.silentNote(stats, "") != "":
		return stats, fmt.Errorf("fetch: %s: %w", f.silentNote(stats, ""), exitcode.ErrPartial)
	}
	return stats, nil
}

// runIdle ends a run whose input holds no job: its output, empty, is
// written, and no DHT node is started (no router nor saved node is
// contacted, and the DHT state is not written).
func runIdle(opts Options) (Stats, error) {
	start := time.Now()
	out, err := createResults(opts)
	if err != nil {
		return Stats{}, fmt.Errorf("fetch: %w", err)
	}
	if err := out.Close(); err != nil {
		return Stats{}, fmt.Errorf("fetch: %w", err)
	}
	if opts.Logger != nil {
		opts.Logger.Info("fetch: no jobs in the input: nothing to fetch, no DHT node started")
	}
	return newCounters().snapshot(time.Since(start)), nil
}

// isRegularFile reports whether path (not "-") names a regular file,
// through symbolic links.
func isRegularFile(path string) bool {
	if path == "-" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// createResults opens the results output (see rowio.Create). Results
// carry info dictionaries (tens of KiB, up to 10 MiB each): small row
// groups, which rowio also ends at 64 MiB, keep the writer from holding a
// whole run in memory.
func createResults(opts Options) (*rowio.Writer[schema.Result], error) {
	return rowio.CreateWith[schema.Result](opts.OpenOutput, opts.Output, opts.Stdout, parquet.MaxRowsPerRowGroup(resultRowGroup))
}

type jobSource interface {
	Read([]jobRow) (int, error)
	Unread() (int64, bool)
}

type resultSink interface {
	Write([]schema.Result) error
}

// drainGrace bounds how long a stopped run goes on reading its input to
// release the jobs it did not start, and then how long it waits for the
// rest to be counted: an upstream writer that neither writes nor closes
// must not keep fetch from exiting.
var drainGrace = 10 * time.Second

// runJobs runs the worker pool: one reader, Concurrency workers, one
// writer batching results. It returns a non-nil error only for bad input
// or a failed write, in which case the output must be discarded. Every
// job of the input is counted: attempted, lease expired, or unfinished
// (never started, or abandoned when the run stopped); of the unfinished,
// those read within drainGrace of the stop are released (runJob). The
// run stops at its deadline: when deadline (Run's startCtx) ends with
// errDeadline as its cause.
func runJobs(ctx context.Context, f *Fetcher, in jobSource, out resultSink, deadline context.Context) (Stats, error) {
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	stopDeadline := context.AfterFunc(deadline, func() {
		if errors.Is(context.Cause(deadline), errDeadline) {
			stopRun(errDeadline)
		}
	})
	defer stopDeadline()
	// grace is read once, here: the goroutine below may still run for a
	// moment after runJobs has returned.
	grace := drainGrace
	giveUp := make(chan struct{}) // closed grace after the stop
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-runCtx.Done():
		case <-done:
			return
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			close(giveUp)
		case <-done:
		}
	}()
	jobs := make(chan schema.Job, f.opts.Concurrency)
	results := make(chan schema.Result, f.opts.Concurrency)
	type readEnd struct{ err, countErr error }
	readDone := make(chan readEnd, 1)
	var wg sync.WaitGroup
	go func() { // reader
		err, countErr := readJobs(runCtx, in, jobs, giveUp, f.stats)
		if err != nil {
			stopRun(err)
		}
		readDone <- readEnd{err, countErr}
	}()
	for range f.opts.Concurrency {
		wg.Go(func() {
			for job := range jobs {
				if res, ok := f.runJob(runCtx, job); ok {
					results <- res
				}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	stopProgress := f.progress(runCtx)
	kept := &releaseCounter{out: out}
	var full *rowio.FullError
	writeErr := writeResults(results, kept, func(rows []schema.Result, err error) error {
		fe, ok := errors.AsType[*rowio.FullError](err)
		if !ok {
			stopRun(err)
			return err
		}
		if full == nil { // stop as at a signal: the jobs left are released
			full = fe
			stopRun(fe)
		}
		f.releaseRefused(kept, rows[fe.Taken:], fe)
		return nil
	})
	stopProgress()
	var end readEnd
	select {
	case end = <-readDone:
	case <-time.After(grace):
		end.countErr = fmt.Errorf("still reading after %v", grace)
	}
	if end.countErr != nil && f.opts.Logger != nil {
		f.opts.Logger.Warn("fetch: could not count all the jobs the run did not start; jobs and unfinished miss the rest of the input",
			"err", end.countErr.Error())
	}
	st := f.Stats()
	if end.err != nil {
		return st, exitcode.BadInput(fmt.Errorf("fetch: %w", end.err))
	}
	if full != nil { // the results and released rows that fit are kept
		st.Released = kept.n
		return st, full
	}
	if writeErr != nil {
		// The released rows produced after the failure (the stop it
		// caused releases every job left) never reached the output.
		st.Released = kept.n
		return st, fmt.Errorf("fetch: %w", writeErr)
	}
	return st, nil
}

// batch is what one Read of the jobs input returned.
type batch struct {
	rows []jobRow
	err  error
}

// readJobs hands the jobs of in to the workers and closes jobs. A row
// whose info_hash an earlier row had is skipped and counted as a
// duplicate: one attempt per hash (a planner's jobs never repeat one; a
// hash list or capture's observations given as jobs do). Once ctx ends it
// goes on handing jobs over, for the workers to release them, until the
// input ends or giveUp closes; then it counts the rest of the input
// (jobs and unfinished) without handing it over, from a Parquet file's
// footer (repeats included) or by reading a stream through. err is
// unreadable input (before the stop); countErr says that the rest could
// not be read or counted (a stream that broke after the stop), which is
// not bad input: the run was over.
//
// The reads happen on a goroutine of their own, so that a stream that
// stalls after the stop delays neither the workers nor the commit.
func readJobs(ctx context.Context, in jobSource, jobs chan<- schema.Job, giveUp <-chan struct{}, st *counters) (err, countErr error) {
	handing := true
	closeJobs := func() { // at once: the rest may take long to count
		if handing {
			close(jobs)
			handing = false
		}
	}
	defer closeJobs()
	seen := hashSet{}
	batches := make(chan batch)
	quit := make(chan struct{}) // closed when readJobs stops taking batches
	counted := make(chan error, 1)
	go func() {
		for {
			buf := make([]jobRow, 256)
			n, err := in.Read(buf)
			b := batch{buf[:n], err}
			select {
			case batches <- b:
				if err != nil {
					return
				}
			case <-quit: // seen is ours from here on
				counted <- countLeft(in, seen, b, st)
				return
			}
		}
	}()
	// stop gives up on the rest of the input once b's rows from i on are
	// not handed over: it counts them and what is left to read.
	stop := func(b batch, i int) error {
		closeJobs()
		seen.count(b.rows[i:], st)
		switch {
		case errors.Is(b.err, io.EOF):
			return nil
		case b.err != nil:
			return b.err
		}
		close(quit)
		return <-counted
	}
	for {
		var b batch
		select {
		case b = <-batches:
		case <-giveUp:
			closeJobs()
			close(quit)
			return nil, <-counted
		}
		for i, r := range b.rows {
			if !seen.add(r.InfoHash) {
				st.duplicates.Add(1)
				continue
			}
			select {
			case jobs <- r.job():
				st.jobs.Add(1)
			case <-giveUp:
				st.jobs.Add(1)
				st.unfinished.Add(1)
				return nil, stop(b, i+1)
			}
		}
		switch {
		case errors.Is(b.err, io.EOF):
			return nil, nil
		case b.err != nil && ctx.Err() != nil:
			return nil, b.err
		case b.err != nil:
			return b.err, nil
		}
	}
}

// countLeft counts b's rows and, unless b ended the input, the rest of
// in as unfinished jobs.
func countLeft(in jobSource, seen hashSet, b batch, st *counters) error {
	seen.count(b.rows, st)
	switch {
	case errors.Is(b.err, io.EOF):
		return nil
	case b.err != nil:
		return b.err
	}
	return countRest(in, seen, st)
}

// hashSet holds the hashes of the jobs read so far.
type hashSet map[schema.Hash]struct{}

// add reports whether h is new, and adds it.
func (s hashSet) add(h schema.Hash) bool {
	if _, ok := s[h]; ok {
		return false
	}
	s[h] = struct{}{}
	return true
}

// count counts rows, not run, as unfinished jobs or duplicates.
func (s hashSet) count(rows []jobRow, st *counters) {
	for _, r := range rows {
		if s.add(r.InfoHash) {
			st.jobs.Add(1)
			st.unfinished.Add(1)
		} else {
			st.duplicates.Add(1)
		}
	}
}

// countRest counts the jobs left in in as unfinished.
func countRest(in jobSource, seen hashSet, st *counters) error {
	if n, ok := in.Unread(); ok {
		st.jobs.Add(n)
		st.unfinished.Add(n)
		return nil
	}
	buf := make([]jobRow, 1024)
	for {
		n, err := in.Read(buf)
		seen.count(buf[:n], st)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// progress logs the counters every opts.Progress until the returned stop
// is called; stop returns once the logging goroutine has ended, so that no
// progress line is written after the run returns (its caller may be writing
// to the same stderr by then).
func (f *Fetcher) progress(ctx context.Context) func() {
	if f.opts.Logger == nil || f.opts.Progress <= 0 {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(f.opts.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				s := f.Stats()
				// ok, not verified: a verified info dictionary can still be
				// invalid; the rate keeps two decimals (a slow swarm's
				// 0.4/s is not 0).
				f.opts.Logger.Info("fetch: progress", "jobs", s.Jobs, "attempted", s.Attempted,
					"ok", s.Outcomes["ok"], "ok_per_sec", math.Round(s.OKPerSec*100)/100, "connects", s.Connects)
			}
		}
	}()
	return func() { close(done); <-ended }
}
