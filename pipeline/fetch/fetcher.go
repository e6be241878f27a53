package fetch

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
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
	// reach is where the run dials and queries (Options.reachOf); a
	// --peer endpoint is dialled whatever it says.
	reach reach.Rule
	mem   *memBudget
	ways  *ways // the way each endpoint spoke this run (Options.Encryption)
	// saved are the nodes of the loaded DHT state, kept by Close when no
	// node answered this run (the network was down: its state says
	// nothing about the nodes).
	saved []savedNode
	// silent is set when the DHT node asked routers (--bootstrap) or
	// saved nodes and none answered: the network or --bootstrap is
	// down, and the jobs' lookups fail as local_error (see silentNote:
	// the run is partial then). A node with nobody to ask (--bootstrap ""
	// and no saved node) is a run set up so, as one without a DHT.
	silent bool
	// release frees Options.DHTState's lock (nil: nothing to free).
	release func()
	// stateMu serialises saving the DHT state (Options.StateSaver's
	// function, from any goroutine) with Close.
	stateMu sync.Mutex
}

// NewFetcher validates opts and, when opts.DHTOn, starts the DHT node:
// warm from the nodes saved in opts.DHTState when one of them answers,
// else bootstrapped. Close releases it (and saves the state).
func NewFetcher(ctx context.Context, opts Options) (*Fetcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	release, err := lockStateFor(opts)
	if err != nil {
		return nil, err
	}
	f, err := startFetcher(ctx, opts, release)
	if err != nil {
		release()
	}
	return f, err
}

// lockStateFor takes opts.DHTState when the run uses it (a DHT node and a
// directory); else it returns a no-op.
func lockStateFor(opts Options) (release func(), err error) {
	if !opts.DHTOn() || opts.DHTState == "" {
		return func() {}, nil
	}
	return lockDHTState(opts.DHTState)
}

// startFetcher is NewFetcher once the DHT state is locked (release frees
// it; the Fetcher's Close calls it). On error the caller releases.
func startFetcher(ctx context.Context, opts Options, release func()) (*Fetcher, error) {
	f := &Fetcher{opts: opts, stats: newCounters(), start: time.Now(), avoid: newAvoidSet(opts.AvoidPeers),
		reach: opts.reachOf(ctx), mem: newMemBudget(opts.MetadataMemory, opts.MaxMetadataSize), ways: &ways{},
		release: release}
	copy(f.peerID[:], "-IH0001-")
	_, _ = rand.Read(f.peerID[8:])
	if !opts.DHTOn() {
		return f, nil
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var saved *loadedState
	if opts.DHTState != "" {
		st, ok, err := loadDHTState(opts.DHTState)
		switch {
		case err != nil:
			// Like capture: a state that cannot be used costs a cold
			// start, not the run; this run's nodes replace it at exit.
			log.Warn("fetch: ignoring the saved DHT state; bootstrapping", "err", err.Error())
		case ok:
			saved, f.saved = &st, st.Nodes
		}
		if saved == nil {
			saved = newStateID(opts.DHTState, log)
		}
	}
	n, st, err := startDHT(ctx, opts, f.reach, saved)
	if err != nil {
		return nil, err
	}
	f.dht = n
	addr := n.s.Addr().String()
	switch {
	case st.Nodes == 0 && ctx.Err() != nil:
		// Run's deadline (or a signal) came first: no job will be
		// looked up.
		log.Warn("fetch: DHT bootstrap cut short", "cause", context.Cause(ctx).Error(), "addr", addr, "saved_nodes", st.Saved)
	case st.Nodes == 0:
		// Said once, as a warning: no "bootstrapped nodes=0" before it.
		log.Warn("fetch: no DHT node answered the bootstrap; lookups will fail as local_error", "addr", addr, "saved_nodes", st.Saved)
		f.silent = len(opts.Bootstrap) > 0 || st.Saved > 0
	default:
		from := "bootstrap"
		if st.Warm {
			from = "saved state"
		}
		log.Info("fetch: DHT bootstrapped", "nodes", st.Nodes, "addr", addr, "from", from,
			"saved_nodes", st.Saved, "saved_answered", st.Answered)
		if st.Saved > 0 && !st.Warm {
			log.Warn("fetch: no saved DHT node answered; bootstrapped through --bootstrap", "saved_nodes", st.Saved)
		}
	}
	return f, nil
}

// silentNote says, after sep, why a run whose DHT never answered the
// bootstrap left jobs undone: the lookups they needed failed (their jobs
// end local_error, held against no hash, unless a peer of their own
// failed them otherwise). Such a run is partial, as one stopped early: a
// network outage must not pass for a pass that worked. It is "" when the
// DHT answered, or when no job needed a lookup that failed (their own
// peers served them all).
func (f *Fetcher) silentNote(st Stats, sep string) string {
	if !f.silent || st.LookupsFailed == 0 {
		return ""
	}
	return fmt.Sprintf("%sno DHT node answered the bootstrap (check the network and --bootstrap): "+
		"%d of %d lookups failed (local_error, held against no hash)", sep, st.LookupsFailed, st.Lookups)
}

// newStateID picks a node ID for a fetch without a usable saved state and
// saves it in dir before the node sends anything: a capture sharing dir
// reads it to tell this run's lookups from the DHT's (a failure to save
// is logged; Close tries again).
func newStateID(dir string, log *slog.Logger) *loadedState {
	var st loadedState
	_, _ = rand.Read(st.ID[:])
	if err := saveDHTState(dir, st.ID, nil, time.Now()); err != nil {
		log.Warn("fetch: DHT state not saved", "err", err.Error())
	}
	return &st
}

// Close stops the DHT node and, with Options.DHTState, saves its node ID
// and the nodes that answered it for the next run (a failure to save is
// logged: the results are what matters) and releases the state's lock.
func (f *Fetcher) Close() {
	f.stateMu.Lock()
	if f.dht != nil {
		good := f.goodNodes()
		f.dht.close()
		f.writeState(good)
		f.dht = nil
	}
	f.stateMu.Unlock()
	if f.release != nil {
		f.release()
		f.release = nil
	}
}

// saveState saves the DHT state now, as Close will, while the node runs
// on; after Close it does nothing. It may be called from any goroutine.
func (f *Fetcher) saveState() {
	f.stateMu.Lock()
	defer f.stateMu.Unlock()
	if f.dht != nil {
		f.writeState(f.goodNodes())
	}
}

// goodNodes are the nodes to save: those that answered this run, or the
// loaded state's when none did.
func (f *Fetcher) goodNodes() []savedNode {
	if good := f.dht.goodNodes(); len(good) > 0 {
		return good
	}
	return f.saved
}

// writeState saves the node's ID and good to Options.DHTState, if any
// (a failure is logged: the results are what matters).
func (f *Fetcher) writeState(good []savedNode) {
	if f.opts.DHTState == "" {
		return
	}
	if err := saveDHTState(f.opts.DHTState, f.dht.s.ID(), good, time.Now()); err != nil && f.opts.Logger != nil {
		f.opts.Logger.Warn("fetch: DHT state not saved", "err", err.Error())
	}
}

// Stats returns the counters so far.
func (f *Fetcher) Stats() Stats { return f.stats.snapshot(time.Since(f.start)) }

// errJobDeadline is the cause of a job's context ending at the job's own
// deadline (Options.Timeout, or its lease running out). Exchanges it cuts
// off are no failure of their peers': only a peer's own limits
// (Options.PeerTimeout, Options.ConnectTimeout) blame it.
var errJobDeadline = errors.New("the job's time is up")

// fullV2 is job's full v2 hash when it is one of its infohash, else nil.
func fullV2(job schema.Job) []byte { return schema.FullV2(job.InfoHash, job.InfoHashV2) }

// Fetch makes one attempt at job's metadata and returns its result. An
// ok result's hash_type (and info_hash_v2) say which hash of the metadata
// matched the job's (see verifyInfo), whatever the job's hash_type said;
// a failed one keeps the job's. It returns false, and no result, when ctx
// ends before the attempt does, cancelled or past a deadline of its own
// (the run is stopping: a signal, Run's --deadline): Run then releases
// the job's lease (a released row), as a made-up failure would push its
// next retry back. The job's own time (Options.Timeout, its lease_until)
// ends it with a result: a timeout, no peer blamed for it.
func (f *Fetcher) Fetch(ctx context.Context, job schema.Job) (schema.Result, bool) {
	start := time.Now()
	typ := job.HashType
	if typ == 0 {
		typ = schema.HashV1
	}
	res := schema.Result{
		InfoHash: job.InfoHash, HashType: typ, Attempt: job.Attempt,
		LeaseID: job.LeaseID, AttemptedAt: schema.Millis(f.opts.Clock.Now()),
	}
	hctx, cancel := context.WithTimeoutCause(ctx, f.opts.Timeout, errJobDeadline)
	defer cancel()
	if job.LeaseUntil != 0 {
		var cancelLease context.CancelFunc
		// lease_until is on the run's clock; the context's deadline is
		// the wall-clock time it reads so.
		deadline := f.opts.Clock.Deadline(schema.Time(job.LeaseUntil))
		if f.opts.leaseDeadline != nil {
			deadline = f.opts.leaseDeadline(job, deadline)
		}
		hctx, cancelLease = context.WithDeadlineCause(hctx, deadline, errJobDeadline)
		defer cancelLease()
	}
	if f.opts.cutJob != nil {
		var cut context.CancelCauseFunc
		hctx, cut = context.WithCancelCause(hctx)
		defer cut(nil)
		f.opts.cutJob(job, func() { cut(errJobDeadline) })
	}
	a := newAttempt(f, job)
	a.run(hctx)
	f.warnMemory()
	if a.winner == nil && ctx.Err() != nil {
		return res, false
	}
	a.fill(&res)
	res.TotalMs = millis(time.Since(start))
	f.debugAttempt(ctx, job, a, &res)
	f.stats.attempted.Add(1)
	classes := make([]string, len(res.PeerFailures))
	for i, pf := range res.PeerFailures {
		classes[i] = pf.Class
	}
	f.stats.addOutcome(res.Outcome, classes)
	return res, true
}

// warnMemory warns, once a run, when the metadata memory limit has
// refused an exchange's piece: every exchange it refuses ends as
// local_error, which counts against no hash but fetches nothing either,
// and only a person can tell whether the limit is too low for the run's
// concurrency or peers are holding it (peers that send all of a large
// info dictionary but one piece keep it until --peer-timeout).
func (f *Fetcher) warnMemory() {
	if f.mem.refused.Load() == 0 || f.opts.Logger == nil || !f.mem.warned.CompareAndSwap(false, true) {
		return
	}
	f.opts.Logger.Warn("fetch: --metadata-memory reached: exchanges that need more end as local_error until others "+
		"give theirs back; raise --metadata-memory or lower --concurrency or --peers-per-hash, or, if peers hold it "+
		"(all of a large info dictionary but one piece, until --peer-timeout), lower --max-metadata-size or --peer-timeout",
		"limit_bytes", f.mem.limit)
}
