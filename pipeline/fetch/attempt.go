package fetch

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// attempt is the state of one job's attempt: the peers found so far, the
// exchanges in flight and their outcomes.
type attempt struct {
	f       *Fetcher
	cfg     exchangeConfig
	avoid   map[string]bool // the job's own avoid_peers
	named   map[string]bool // --peer endpoints: tried whatever the dataset's penalties
	seen    map[string]bool
	queue   []string
	avoided int
	// outOfReach are the peers found that the run's reach rule refused
	// (Fetcher.reach), or that are past the maxPortsPerIP ports of
	// their public address: not dialled, and not among the peers found.
	outOfReach int
	perIP      map[netip.Addr]uint8 // peers queued per public address, up to maxPortsPerIP
	// penalisedUntil is the earliest end of the penalties (the jobs
	// file's avoid list) still running when a skipped peer was skipped;
	// zero when none was (only a job's own avoid_peers whose penalty is
	// over: a proven-bad hash's known sources).
	penalisedUntil time.Time
	// undated counts the peers skipped as the job's own avoid_peers that
	// the jobs file's avoid list does not date (a file an older
	// plan-retries wrote has no list; a list cut at its limits): their
	// penalty is taken as running, ending we know not when (see fill).
	undated int
	// dialled counts the exchanges started; tried those whose peer gave
	// its answer (served, failed, or its own ConnectTimeout or
	// PeerTimeout ended it): peers_tried. An exchange the job's deadline
	// cut off (cutOff), one we stopped (another peer won, the metadata
	// was found bad, the run stopped) and one our side failed
	// (local_error) got no answer from its peer, so it is not tried: the
	// scheduler reads peers_tried < peers_found as peers left to try,
	// and a peer we stopped waiting for may still serve.
	dialled  int
	tried    int
	inflight int
	cutOff   int // exchanges the job's deadline ended (not the peers' fault)
	results  chan peerOutcome
	outcomes []peerOutcome // failed peers, in the order they ended
	winner   *peerOutcome
	final    bool // the metadata itself was found bad: stop trying peers
	timedOut bool
	lookup   *lookupRun
	// noSource: the attempt had nowhere to find a peer (no DHT node, no
	// --peer, no peers in the job). Its end is our configuration's doing,
	// not the swarm's: local_error, which counts against no hash.
	noSource bool
}

func newAttempt(f *Fetcher, job schema.Job) *attempt {
	a := &attempt{
		f: f,
		cfg: exchangeConfig{
			InfoHash: job.InfoHash, InfoHashV2: fullV2(job), PeerID: f.peerID,
			MaxMetadataSize: f.opts.MaxMetadataSize, ConnectTimeout: f.opts.ConnectTimeout, Encryption: f.opts.Encryption, Ways: f.ways,
			Stats: f.stats, Mem: f.mem, Clock: f.opts.Clock, guard: f.opts.guard,
		},
		avoid:   make(map[string]bool, len(job.AvoidPeers)),
		seen:    map[string]bool{},
		results: make(chan peerOutcome),
	}
	for _, p := range job.AvoidPeers {
		a.avoid[canonicalAddr(p)] = true
	}
	if len(f.opts.Peers) > 0 {
		a.named = make(map[string]bool, len(f.opts.Peers))
		for _, p := range f.opts.Peers {
			a.named[canonicalAddr(p)] = true
		}
	}
	a.add(job.Peers)
	a.add(f.opts.Peers)
	a.noSource = f.dht == nil && len(f.opts.Peers) == 0 && len(job.Peers) == 0
	return a
}

// inReach reports whether the run's reach lets it dial p, a canonical
// address (a host name is out of reach: it could resolve anywhere).
func (f *Fetcher) inReach(p string) bool {
	ap, err := netip.ParseAddrPort(p)
	return err == nil && f.reach.OK(ap)
}

// canonicalAddr renders ip:port addresses one way so that avoid_peers and
// found peers compare equal; host names are kept as given.
func canonicalAddr(s string) string {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
	}
	return s
}

// maxPortsPerIP bounds the peers of one public address an attempt dials:
// get_peers values are what DHT nodes say, and a liar's can list one
// victim's ports by the thousand (capture's walk bounds the nodes it
// queries per address alike). Peers of a loopback or private address,
// ranges the run was pointed into (the user's own networks, where every
// peer may share one address), are not bounded.
const maxPortsPerIP = 8

// crowded reports whether p, a canonical address in reach, is past the
// maxPortsPerIP ports of its public address already queued, and counts
// it among them when it is not.
func (a *attempt) crowded(p string) bool {
	ap, err := netip.ParseAddrPort(p)
	if err != nil || reach.ClassOf(ap.Addr()) != reach.Public {
		return false
	}
	if a.perIP == nil {
		a.perIP = map[netip.Addr]uint8{}
	}
	if a.perIP[ap.Addr()] >= maxPortsPerIP {
		return true
	}
	a.perIP[ap.Addr()]++
	return false
}

// add queues the peers of addrs not seen before, but those out of the
// run's reach (a DHT node or the state may list any address; a host name
// is out of reach too), those the job's avoid_peers lists or the dataset
// penalises (the jobs file's avoid list), and those past maxPortsPerIP
// ports of their public address (counted as out of reach). A --peer
// endpoint is exempt from the dataset's penalties and from
// maxPortsPerIP: the user named it for every job, whatever it did
// before. A job's avoid_peers entry whose penalty the file's list dates
// as ended (it ended after the plan: the planner hands a job only live
// penalties) is no longer avoided: its peer is dialled, as the next plan
// would hand it.
func (a *attempt) add(addrs []string) {
	now := a.f.opts.Clock.Now() // one clock for every check of a peer
	for _, p := range addrs {
		p = canonicalAddr(p)
		until, dated := a.f.avoid[p]
		running := a.f.avoid.skips(p, now)
		switch {
		case a.seen[p]:
		case !a.named[p] && !a.f.inReach(p):
			a.seen[p] = true
			a.outOfReach++
		case (a.avoid[p] && (running || !dated)) || (!a.named[p] && running):
			a.seen[p] = true
			a.avoided++
			if running && (a.penalisedUntil.IsZero() || until.Before(a.penalisedUntil)) {
				a.penalisedUntil = until
			}
			if !dated {
				a.undated++
			}
		case !a.named[p] && a.crowded(p):
			a.seen[p] = true
			a.outOfReach++
		default:
			a.seen[p] = true
			a.queue = append(a.queue, p)
		}
	}
}

// run tries peers as they are found, PeersPerHash at a time, until one
// serves verified metadata, the metadata is found bad, every peer found
// has failed once the lookup ended, or hctx ends.
func (a *attempt) run(hctx context.Context) {
	pctx, stopPeers := context.WithCancel(hctx)
	defer stopPeers()
	if a.f.dht != nil {
		a.f.stats.lookups.Add(1)
		a.lookup = a.f.dht.lookup(pctx, a.cfg.InfoHash)
	}
	lookupDone := a.lookup == nil
	for {
		for a.winner == nil && !a.final && !a.timedOut && a.inflight < a.f.opts.PeersPerHash && len(a.queue) > 0 {
			a.launch(pctx)
		}
		stopping := a.winner != nil || a.final || a.timedOut
		if a.inflight == 0 && (stopping || (len(a.queue) == 0 && lookupDone)) {
			break
		}
		var peersCh chan []string
		var doneCh chan struct{}
		if !lookupDone && !stopping {
			peersCh, doneCh = a.lookup.peers, a.lookup.done
		}
		var expired <-chan struct{}
		if !a.timedOut {
			expired = hctx.Done()
		}
		select {
		case addrs := <-peersCh:
			a.add(addrs)
		case <-doneCh:
			lookupDone = true
		case o := <-a.results:
			a.inflight--
			switch {
			case o.Cancelled:
			case o.CutOff:
				// The job's deadline passed: this may arrive before
				// expired is seen, and must not read as the peer's end.
				a.cutOff++
				a.timedOut = true
			case o.Err == nil:
				a.tried++
				if a.winner == nil {
					a.winner = &o
				}
				stopPeers()
			default:
				if o.Err.Class != schema.OutcomeLocalError {
					a.tried++
				}
				a.outcomes = append(a.outcomes, o)
				if o.Final {
					a.final = true
					stopPeers()
				}
			}
		case <-expired:
			a.timedOut = true
		}
	}
	stopPeers()
	if a.lookup != nil {
		<-a.lookup.done
	}
}

func (a *attempt) launch(pctx context.Context) {
	addr := a.queue[0]
	a.queue = a.queue[1:]
	a.dialled++
	a.inflight++
	go func() {
		ctx, cancel := context.WithTimeout(pctx, a.f.opts.PeerTimeout)
		defer cancel()
		a.results <- exchange(ctx, addr, &a.cfg)
	}()
}

// fill writes the attempt's outcome into res. The outcome is ok when a
// peer served verified metadata; otherwise the highest-precedence failure
// class among the peers' failures, the timeout and the lookup (see
// precedence); no_peers when nothing at all was found, by the job's
// deadline or not. The timings of stages that did not run stay nil
// (null; see schema.Result); total_ms is the caller's. served_by names
// the peer the row's metadata_size and per-stage timings come from, when
// one does: the winner, or the deciding peer once it got through the
// BEP 3 handshake.
func (a *attempt) fill(res *schema.Result) {
	st := a.f.stats
	res.PeersFound = int32(a.found())
	res.PeersTried = int32(a.tried)
	st.peersFound.Add(int64(res.PeersFound))
	st.avoided.Add(int64(a.avoided))
	st.outOfReach.Add(int64(a.outOfReach))
	res.PeerFailures = []schema.PeerFailure{}
	for _, o := range a.outcomes {
		// A final outcome blames the metadata, which matched the
		// infohash: the peer served it faithfully and is not penalised.
		if o.Err.Class != schema.OutcomeLocalError && !o.Final {
			res.PeerFailures = append(res.PeerFailures, schema.PeerFailure{Addr: o.Addr, Class: o.Err.Class, At: schema.Millis(o.At)})
		}
	}
	lookupFailed := false
	if a.lookup != nil {
		res.LookupMs = millis(a.lookup.took)
		lookupFailed = a.lookup.err != nil || a.lookup.responses == 0
	}
	if w := a.winner; w != nil {
		res.Outcome = schema.OutcomeOK
		res.ServedBy = w.Addr
		res.MetadataSize = int64(len(w.Meta.InfoBytes))
		res.ConnectMs, res.MetadataMs = millis(w.ConnectDur), millis(w.MetadataDur)
		res.HandshakeMs, res.ExtensionMs, res.VerifyMs = millis(w.HandshakeDur), millis(w.ExtensionDur), millis(w.VerifyDur)
		res.ResultMeta = schema.OKMeta(w.Meta)
		// The type and v2 hash the metadata proved: merge replaces the
		// state's with them (a refuted claim included, which detail
		// names).
		res.HashType, res.InfoHashV2, res.Detail = w.HashType, w.InfoHashV2, joinDetail(w.Refuted, w.servedOver())
		return
	}
	if lookupFailed {
		st.lookupsFailed.Add(1)
	}
	var decider *peerOutcome
	for i := range a.outcomes {
		if decider == nil || Outranks(a.outcomes[i].Err.Class, decider.Err.Class) {
			decider = &a.outcomes[i]
		}
	}
	outcome, detail := schema.OutcomeNoPeers, a.noPeersDetail()
	if decider != nil {
		outcome, detail = decider.Err.Class, decider.Addr+": "+decider.Err.Detail
	}
	// The job's timeout counts when it left found peers untried or cut
	// off mid-exchange (neither is in a.outcomes: no peer is blamed for
	// our deadline); a lookup still running after every found peer
	// failed adds nothing. One that had found no peer at all by then
	// leaves the attempt no_peers: nobody was there to time out, and the
	// scheduler keeps "no peers" apart from "peers that did not answer
	// in time".
	if a.timedOut && (len(a.queue) > 0 || a.cutOff > 0) && Outranks(schema.OutcomeTimeout, outcome) {
		outcome, detail = schema.OutcomeTimeout, a.timeoutDetail()
		decider = nil
	}
	if lookupFailed && Outranks(schema.OutcomeLocalError, outcome) {
		outcome, detail = schema.OutcomeLocalError, a.lookupDetail()
		decider = nil
	}
	// Nowhere to look (no DHT node, no --peer, no peers in the job): a
	// run set up so says nothing of the swarm, and no_peers would back
	// the hash off as if nobody had it.
	if a.noSource && outcome == schema.OutcomeNoPeers {
		outcome, detail = schema.OutcomeLocalError, a.f.opts.noSourceDetail()
	}
	// Peers were found but every one was skipped: the swarm answered and
	// we passed its peers over, so this is not the swarm-level no_peers.
	// While a penalty of one of them runs, the hash waits for its end,
	// with no failure of its own (peers_penalised). Every skipped peer's
	// penalty runs, or has an end the file does not say (add dials those
	// it dates as ended), so allAvoided is only the fallback.
	if outcome == schema.OutcomeNoPeers && a.avoided > 0 {
		outcome, detail = allAvoided, a.allAvoidedDetail()
		switch {
		case a.undated > 0:
			// A penalty whose end the file does not say may end any time:
			// retry_after is the attempt's own time, which merge defers
			// by the policy's retry_soon (a penalty it knows runs on in
			// the next plan's avoid list).
			outcome, res.RetryAfter = schema.OutcomePeersPenalised, res.AttemptedAt
			detail += fmt.Sprintf("; %d of them the job's avoid_peers, their penalty's end unknown (the jobs file "+
				"does not list them): retrying soon", a.undated)
		case !a.penalisedUntil.IsZero():
			outcome = schema.OutcomePeersPenalised
			detail += "; the first penalty ends at " + a.penalisedUntil.UTC().Format(time.RFC3339)
			res.RetryAfter = schema.Millis(a.penalisedUntil)
		}
	}
	// A detail may quote what a peer sent; results' detail is a STRING.
	res.Outcome, res.Detail = outcome, schema.EscapeInvalidUTF8(detail)
	if decider != nil {
		res.MetadataSize = decider.MetadataSize
		if decider.Handshook {
			// The row's metadata_size and timings are this peer's
			// (a size and every stage past the dial come after its
			// BEP 3 handshake): served_by names it, as an ok row's
			// names the peer whose metadata it holds. merge stores
			// served_by in torrents for an ok row only and penalises
			// peer_failures, never served_by.
			res.ServedBy = decider.Addr
			res.ConnectMs, res.HandshakeMs = millis(decider.ConnectDur), millis(decider.HandshakeDur)
		}
		if decider.Extended {
			res.ExtensionMs = millis(decider.ExtensionDur)
		}
		if decider.Verified {
			res.VerifyMs = millis(decider.VerifyDur)
		}
	}
}

// millis is d in whole milliseconds, rounded down, for a timing column
// of a stage that ran (see schema.Result): never nil, 0 under 1 ms.
func millis(d time.Duration) *int64 { return new(d.Milliseconds()) }

// allAvoided is the outcome of an attempt whose found peers were all
// skipped though none's penalty still ran, a peer-level class (the
// peers' fault, not the swarm's). add no longer skips such a peer (a
// job's avoid_peers entry the jobs file dates as ended is dialled; one
// it does not date counts as running), so it is a fallback only. While
// any skipped peer's penalty runs the outcome is peers_penalised, with
// retry_after its earliest end: no failure of the hash, which may have
// paid for a peer penalised with another. No peer_failures are added
// either way: nobody was dialled.
const allAvoided = schema.OutcomeRejected

func (a *attempt) allAvoidedDetail() string {
	s := fmt.Sprintf("all %d peers found are penalised (avoided); none tried", a.avoided)
	if a.lookup != nil {
		s += fmt.Sprintf("; %d DHT nodes answered", a.lookup.responses)
	}
	return s
}

// found is the number of distinct peers found that the attempt could
// dial: neither out of reach nor avoided.
func (a *attempt) found() int { return len(a.seen) - a.avoided - a.outOfReach }

func (a *attempt) noPeersDetail() string {
	s := "no peers found"
	if a.timedOut {
		s += " before the timeout"
	}
	switch {
	case a.avoided > 0 && a.outOfReach > 0:
		s += fmt.Sprintf(" (%d avoided, %d out of reach)", a.avoided, a.outOfReach)
	case a.avoided > 0:
		s += fmt.Sprintf(" (%d avoided)", a.avoided)
	case a.outOfReach > 0:
		s += fmt.Sprintf(" (%d out of reach)", a.outOfReach)
	}
	if a.lookup != nil {
		s += fmt.Sprintf("; %d DHT nodes answered", a.lookup.responses)
	}
	return s
}

func (a *attempt) timeoutDetail() string {
	s := fmt.Sprintf("timed out with %d of %d peers tried", a.tried, a.found())
	if a.cutOff > 0 {
		s += fmt.Sprintf(", %d more cut off mid-exchange", a.cutOff)
	}
	return s
}

func (a *attempt) lookupDetail() string {
	if a.lookup.err != nil {
		return "DHT lookup failed: " + a.lookup.err.Error()
	}
	return fmt.Sprintf("none of the %d DHT nodes queried answered the lookup", a.lookup.queried)
}
