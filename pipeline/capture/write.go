package capture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/infohash/infohash/formats/rowio"
)

// write moves batches into the sink until r.batches is closed, enforcing
// MaxObservations; it stops the run (cancel) when the limit is reached or
// the sink fails, and keeps draining so no node blocks.
func (r *runner) write(sink Sink, cancel context.CancelCauseFunc) error {
	seen := newDistinctCounter()
	var err error
	limit := r.opts.MaxObservations
	for batch := range r.batches {
		if err != nil {
			continue
		}
		var skipped int
		batch, skipped = r.fetch.drop(batch) // those the nodes let through (ownlookups.go)
		r.c.fetchLookups.Add(int64(skipped))
		written := r.c.observations.Load()
		if limit > 0 {
			if left := limit - written; int64(len(batch)) > left {
				r.c.observationsOver.Add(int64(len(batch)) - max(left, 0))
				batch = batch[:max(left, 0)]
			}
		}
		if len(batch) == 0 {
			continue
		}
		werr := sink.Write(batch)
		taken := len(batch)
		if fe, ok := errors.AsType[*rowio.FullError](werr); ok {
			taken = fe.Taken // the rest refused: a full disk
		} else if werr != nil {
			taken = 0
		}
		for i := range batch[:taken] { // only hashes the output kept
			seen.add(batch[i].InfoHash)
		}
		r.c.distinct.Store(seen.count())
		if werr != nil {
			err = fmt.Errorf("capture: writing observations: %w", werr)
			cancel(errSink)
			continue
		}
		if r.c.observations.Add(int64(len(batch))) >= limit && limit > 0 {
			cancel(errMax)
		}
	}
	return err
}

// progress logs the counters every Options.Progress.
func (r *runner) progress(ctx context.Context, start time.Time) {
	t := time.NewTicker(r.opts.Progress)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s := r.c.stats()
			r.opts.Logger.Info("capture: progress", "elapsed", time.Since(start).Round(time.Second).String(),
				"packets_in", s.PacketsIn, "socket_dropped", s.SocketDropped, "get_peers", s.Queries["get_peers"], "announce_peer", s.Queries["announce_peer"],
				"samples", s.Samples, "nodes_known", s.NodesKnown, "hash_cap_evicted", r.hashCap.evicted(), "hash_cap_dropped", s.HashCapDropped,
				"repeat_window_evicted", r.recent.evicted(), "repeats_dropped", s.RepeatsDropped, "observations", s.Observations, "distinct", s.DistinctHashes)
		}
	}
}
