package fetch

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Fetcher fetches the metadata of one job at a time, from many goroutines
// at once. It owns the DHT node used for lookups and the stage counters.
type Fetcher struct {
	opts   Options
	dht    *dhtNode
	peerID [20]byte
	stats  *counters
	start  time.Time
	avoid  avoidSet // skipped for every job (Options.AvoidPeers)
	mem    *memBudget
}

// NewFetcher validates opts and, when opts.Bootstrap is set, starts and
// bootstraps the DHT node. Close releases it.
func NewFetcher(ctx context.Context, opts Options) (*Fetcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f := &Fetcher{opts: opts, stats: newCounters(), start: time.Now(), avoid: newAvoidSet(opts.AvoidPeers),
		mem: &memBudget{limit: max(opts.MetadataMemory, opts.MaxMetadataSize)}}
	copy(f.peerID[:], "-IH0001-")
	_, _ = rand.Read(f.peerID[8:])
	if len(opts.Bootstrap) > 0 {
		n, nodes, err := startDHT(ctx, opts.DHTListen, opts.Bootstrap, opts.DHTQueryRate, opts.DHTQueryTimeout)
		if err != nil {
			return nil, err
		}
		f.dht = n
		if opts.Logger != nil {
			opts.Logger.Info("fetch: DHT bootstrapped", "nodes", nodes, "addr", n.s.Addr().String())
			if nodes == 0 {
				opts.Logger.Warn("fetch: no DHT node answered the bootstrap; lookups will fail as local_error")
			}
		}
	}
	return f, nil
}

// Close stops the DHT node.
func (f *Fetcher) Close() {
	if f.dht != nil {
		f.dht.close()
	}
}

// Stats returns the counters so far.
func (f *Fetcher) Stats() Stats { return f.stats.snapshot(time.Since(f.start)) }

// errJobDeadline is the cause of a job's context ending at the job's own
// deadline (Options.Timeout, or its lease running out). Exchanges it cuts
// off are no failure of their peers': only a peer's own limits
// (Options.PeerTimeout, Options.ConnectTimeout) blame it.
var errJobDeadline = errors.New("the job's time is up")

// fullV2 is job's full v2 hash when it is one of its infohash (32 bytes,
// the first 20 of them info_hash), else nil.
func fullV2(job schema.Job) []byte {
	if len(job.InfoHashV2) != 32 || !bytes.Equal(job.InfoHashV2[:20], job.InfoHash[:]) {
		return nil
	}
	return job.InfoHashV2
}

// Fetch makes one attempt at job's metadata and returns its result. An
// ok result's hash_type (and info_hash_v2) say which hash of the metadata
// matched the job's (see verifyInfo), whatever the job's hash_type said;
// a failed one keeps the job's. It
// returns false, and no result, when ctx is cancelled before the attempt
// ends (the run is stopping): such a job is left for the planner to
// re-plan. A deadline on ctx bounds the attempt like Options.Timeout.
func (f *Fetcher) Fetch(ctx context.Context, job schema.Job) (schema.Result, bool) {
	start := time.Now()
	typ := job.HashType
	if typ == 0 {
		typ = schema.HashV1
	}
	res := schema.Result{
		InfoHash: job.InfoHash, HashType: typ, Attempt: job.Attempt,
		LeaseID: job.LeaseID, AttemptedAt: schema.Millis(start),
	}
	hctx, cancel := context.WithTimeoutCause(ctx, f.opts.Timeout, errJobDeadline)
	defer cancel()
	if job.LeaseUntil != 0 {
		var cancelLease context.CancelFunc
		hctx, cancelLease = context.WithDeadlineCause(hctx, schema.Time(job.LeaseUntil), errJobDeadline)
		defer cancelLease()
	}
	a := newAttempt(f, job)
	a.run(hctx)
	if a.winner == nil && ctx.Err() != nil {
		return res, false
	}
	a.fill(&res)
	res.TotalMs = time.Since(start).Milliseconds()
	f.stats.attempted.Add(1)
	classes := make([]string, len(res.PeerFailures))
	for i, pf := range res.PeerFailures {
		classes[i] = pf.Class
	}
	f.stats.addOutcome(res.Outcome, classes)
	return res, true
}
