package fetch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// runJob attempts job or, once the run has stopped, gives its lease back.
// It returns the job's result row, if it has one: an attempt, or a
// released row for a job the run did not start or abandoned in flight. A
// job whose lease has already passed is neither attempted nor released:
// it is not ours any more.
func (f *Fetcher) runJob(ctx context.Context, job schema.Job) (schema.Result, bool) {
	switch {
	case leaseOver(job, f.opts.Clock.Now()):
		f.stats.expired.Add(1)
		return schema.Result{}, false
	case ctx.Err() != nil:
		return f.releaseLease(job, "not started", context.Cause(ctx))
	}
	if res, ok := f.Fetch(ctx, job); ok {
		return res, true
	}
	return f.releaseLease(job, "abandoned in flight", context.Cause(ctx))
}

// leaseOver reports whether job's lease (if it has one) has passed at now.
func leaseOver(job schema.Job, now time.Time) bool {
	return job.LeaseUntil != 0 && now.UnixMilli() >= job.LeaseUntil
}

// releaseLease counts job as unfinished and returns its released row
// (schema.OutcomeReleased): why is what became of it, cause why the run
// stopped. A job without a lease (a hash list) has nothing to give back,
// and one whose lease passed meanwhile is not ours to: neither gets a row.
func (f *Fetcher) releaseLease(job schema.Job, why string, cause error) (schema.Result, bool) {
	f.stats.unfinished.Add(1)
	now := f.opts.Clock.Now()
	if job.LeaseID == "" || leaseOver(job, now) {
		return schema.Result{}, false
	}
	typ := job.HashType
	if typ == 0 {
		typ = schema.HashV1
	}
	f.stats.released.Add(1)
	detail := why
	if cause != nil {
		detail = fmt.Sprintf("%s: %v", why, cause)
	}
	return schema.Result{
		InfoHash: job.InfoHash, HashType: typ, Attempt: job.Attempt, LeaseID: job.LeaseID,
		AttemptedAt: schema.Millis(now), Outcome: schema.OutcomeReleased, Detail: schema.EscapeInvalidUTF8(detail),
		PeerFailures: []schema.PeerFailure{},
	}, true
}

// keptReleased corrects stats.Released for a run that failed (its
// output could not be written, or its input was bad) and so kept no
// Parquet output: a file is discarded, and one written in place is
// unreadable without its footer. Only released rows an output kept give
// leases back; the rest wait for lease_until. An Arrow stream (-) keeps
// the batches written before a failure, whose released rows runJobs
// counted.
func keptReleased(stats Stats, opts Options) Stats {
	if opts.Output != "-" {
		stats.Released = 0
	}
	return stats
}

// releaseCounter counts the released rows in the batches out took.
type releaseCounter struct {
	out resultSink
	n   int64
}

func (c *releaseCounter) Write(rs []schema.Result) error {
	err := c.out.Write(rs)
	if fe, ok := errors.AsType[*rowio.FullError](err); ok {
		rs = rs[:fe.Taken] // taken, the rest refused
	} else if err != nil {
		return err
	}
	for i := range rs {
		if rs[i].Outcome == schema.OutcomeReleased {
			c.n++
		}
	}
	return err
}
