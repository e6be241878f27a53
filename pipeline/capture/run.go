package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/krpc"
	alog "github.com/anacrolix/log"
	"golang.org/x/time/rate"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/reach"
)

// Stop reasons (Stats.StopReason).
const (
	StopDuration        = "duration"
	StopMaxObservations = "max_observations"
	StopInterrupted     = "interrupted"
	StopSinkError       = "sink_error"
	StopOutputFull      = "output_full" // set by the caller: the sink's disk filled up
)

var (
	errMax  = errors.New(StopMaxObservations)
	errSink = errors.New(StopSinkError)
)

// runner is the state shared by a run's nodes, crawler and writer.
type runner struct {
	opts Options
	c    counters
	// nodes is the number of nodes; booted counts those whose first
	// bootstrap has ended, asked those that had a router or saved contact
	// to ask (see bootstrapped).
	nodes   int
	booted  atomic.Int32
	asked   atomic.Int32
	tokens  *tokens
	replies *replyLimiter // replies per address, over all nodes
	// libSend bounds the queries all nodes' anacrolix servers send
	// (bootstrap, routing-table upkeep): one limit for the run, so
	// --node-ids K does not send K times as many.
	libSend *rate.Limiter
	recent  *recentSet // the queries recorded lately, over all nodes (nil: RepeatWindow 0)
	hashCap *hashCap   // the get_peers recorded lately of each hash, over all senders (nil: no cap)
	fetch   *fetchIDs  // the node IDs of a fetch on the same StateDir (nil: no StateDir)
	crawler *crawler
	// reach is where queries may go (see internal/reach); the zero value,
	// public addresses only, is that of a run on the Internet.
	reach   reach.Rule
	batches chan []schema.Observation
}

// Run captures until opts.Duration passes, opts.MaxObservations are
// written or ctx ends, writing observations to sink (which it does not
// close). Whatever was received is in sink when Run returns. The error
// wraps ctx's error when ctx ended the run, and exitcode.ErrPartial when
// a run that asked routers or saved nodes heard no DHT message (silence).
func Run(ctx context.Context, opts Options, sink Sink) (Stats, error) {
	start := time.Now()
	opts, err := checkOptions(opts)
	if err != nil {
		return Stats{}, err
	}
	log := opts.Logger
	release, err := lockState(opts.StateDir)
	if err != nil {
		return Stats{}, err
	}
	defer release()
	st, err := loadState(opts.StateDir)
	if errors.Is(err, errStateVersion) {
		return Stats{}, err
	}
	if err != nil {
		log.Warn("starting without saved DHT state", "err", err)
		st = state{}
	}
	boot, err := resolveBootstrap(opts.Bootstrap)
	if err != nil {
		return Stats{}, err
	}
	rule := reach.For(opts.Listen, boot)
	r := &runner{opts: opts, tokens: newTokens(time.Now()), replies: newReplyLimiter(rule),
		libSend: rate.NewLimiter(libraryQueryRateOut, libraryQueryBurstOut),
		recent:  newRecentSetOf(opts.RepeatWindow, rule, time.Now(), cmp.Or(opts.recentBuckets, recentBuckets)),
		hashCap: newHashCap(opts.MaxSightingsPerHash, opts.RepeatWindow, time.Now(), cmp.Or(opts.hashCapBuckets, hashCapBuckets)),
		fetch:   newFetchIDs(opts.StateDir),
		batches: make(chan []schema.Observation, 64), reach: rule}
	if r.recent != nil {
		entries := len(r.recent.slots)
		r.recent.onEvicted = func() { warnRecentFull(log, opts.RepeatWindow, entries) }
	}
	seed := rand.Uint64()
	ids, tables, spare := nodeIDs(st, opts.NodeIDs, rand.New(rand.NewPCG(seed, 2)).Uint64)
	nodes, err := openNodes(r, opts.Listen, ids, seed)
	if err != nil {
		return Stats{}, err
	}
	r.nodes = len(nodes)
	// The crawler starts from every saved contact, those of tables no
	// node took too (fewer --node-ids than last time, a bad ID).
	saved := append(fromState(st.Samplers), fromState(spare)...)
	for i, n := range nodes {
		tableSaved := fromState(tables[i])
		saved = append(saved, tableSaved...)
		if err := n.startLibrary(boot, tableSaved); err != nil {
			closeNodes(nodes)
			return Stats{}, err
		}
	}
	if opts.Ready != nil {
		addrs := make([]string, len(nodes))
		for i, n := range nodes {
			addrs[i] = n.sock.LocalAddr().String()
		}
		opts.Ready(addrs)
	}
	log.Info("capture: listening", "nodes", len(nodes), "addr", nodes[0].sock.LocalAddr().String(),
		"bootstrap", len(boot), "saved_contacts", len(saved))

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if opts.Duration > 0 {
		var c2 context.CancelFunc
		runCtx, c2 = context.WithTimeoutCause(runCtx, opts.Duration, errors.New(StopDuration))
		defer c2()
	}
	var werr error
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		werr = r.write(sink, cancel)
	}()

	if opts.Crawl {
		// Before the read loops start: they read r.crawler unlocked.
		r.crawler = newCrawler(r, nodes, opts.MaxRPS, seed)
		// Before any contact is queued: a saved node still in its
		// interval waits for its end, wherever else it is listed.
		r.crawler.rest(st.Resting, time.Now())
		for _, a := range boot {
			r.crawler.addAll([]contact{{Addr: a}})
		}
		r.crawler.addAll(saved)
	}
	stop := make(chan struct{})
	var loops, bg sync.WaitGroup
	for _, n := range nodes {
		loops.Go(func() { n.serve(stop) })
		bg.Go(func() { n.maintain(runCtx, boot) })
	}
	if opts.Crawl {
		bg.Go(func() { r.crawler.feed(runCtx, nodes) })
		bg.Go(func() { r.crawler.run(runCtx) })
	}
	if opts.Progress > 0 {
		bg.Go(func() { r.progress(runCtx, start) })
	}

	// The state is saved once: at the end of the run, or earlier by
	// opts.StateSaver's caller, which may not wait for the end.
	var saveOnce sync.Once
	save := func() {
		saveOnce.Do(func() {
			if err := saveState(opts.StateDir, r.state(nodes)); err != nil {
				log.Warn("DHT state not saved", "err", err)
			}
		})
	}
	if opts.StateSaver != nil && opts.StateDir != "" {
		opts.StateSaver(save) // r.crawler is set: r.state reads it
	}

	<-runCtx.Done()
	bg.Wait()
	close(stop)
	loops.Wait()
	r.recent.close() // the read loops were its only users
	r.hashCap.close()
	save()
	closeNodes(nodes)
	close(r.batches)
	<-writerDone

	s := r.c.stats()
	s.RepeatEvicted = r.recent.evicted()
	s.HashCapEvicted = r.hashCap.evicted()
	s.Nodes = len(nodes)
	s.Seconds = time.Since(start).Seconds()
	for _, n := range nodes {
		s.RoutingTable += n.tbl.Load().len()
	}
	debugNodes(log, nodes)
	cause := context.Cause(runCtx)
	switch {
	case werr != nil:
		s.StopReason = StopSinkError
		return s, werr
	case errors.Is(cause, errMax):
		s.StopReason = StopMaxObservations
	case ctx.Err() != nil:
		s.StopReason = StopInterrupted
		return s, fmt.Errorf("capture: %w", ctx.Err())
	default:
		s.StopReason = StopDuration
		return s, r.silence(s, len(saved), opts.Duration)
	}
	return s, nil
}

// MaxNodeIDs bounds Options.NodeIDs (--node-ids).
const MaxNodeIDs = 256

func checkOptions(o Options) (Options, error) {
	d := DefaultOptions()
	if o.NodeIDs <= 0 {
		o.NodeIDs = 1
	}
	if o.NodeIDs > MaxNodeIDs {
		return o, exitcode.BadInput(fmt.Errorf("capture: --node-ids: %d is more than %d", o.NodeIDs, MaxNodeIDs))
	}
	if o.BatchSize <= 0 {
		o.BatchSize = d.BatchSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.drainQuiet <= 0 {
		o.drainQuiet = drainQuiet
	}
	if o.drainMax <= 0 {
		o.drainMax = drainMax
	}
	if o.Listen == "" {
		o.Listen = d.Listen
	}
	// Before the bootstrap routers are looked up: a bad --dht-listen used to
	// be reported as their DNS failure, or after it.
	if p := ListenProblem(o.Listen, o.NodeIDs); p != "" {
		return o, exitcode.BadInput(fmt.Errorf("capture: --dht-listen: %s", p))
	}
	switch {
	case !(o.MaxRPS >= 0): // NaN too
		return o, exitcode.BadInput(fmt.Errorf("capture: --dht-rate: %v is not 0 or more", o.MaxRPS))
	case o.MaxObservations < 0:
		return o, exitcode.BadInput(fmt.Errorf("capture: --max-observations: %d is negative", o.MaxObservations))
	case o.Duration < 0:
		return o, exitcode.BadInput(fmt.Errorf("capture: --duration: %v is negative", o.Duration))
	case o.RepeatWindow < 0:
		return o, exitcode.BadInput(fmt.Errorf("capture: --repeat-window: %v is negative", o.RepeatWindow))
	case o.MaxSightingsPerHash < 0 || o.MaxSightingsPerHash > MaxSightingsLimit:
		return o, exitcode.BadInput(fmt.Errorf("capture: --max-sightings-per-hash: %d is not from 0 to %d", o.MaxSightingsPerHash, MaxSightingsLimit))
	}
	// A state "directory" that is a file would only fail when the run
	// ends: the next run would start cold, and so would every one after.
	if fi, err := os.Stat(o.StateDir); o.StateDir != "" && err == nil && !fi.IsDir() {
		return o, exitcode.BadInput(fmt.Errorf("capture: --dht-state %s: not a directory", o.StateDir))
	}
	return o, nil
}

// ListenProblem says what is wrong with listen as the address of the
// first of nodeIDs nodes, in the terms it was given in, or "": it must be
// HOST:PORT (dhtboot.ListenProblem) with an IPv4 or unnamed host (an IPv6
// address, bracketed or not, is refused as such), and node i
// listens on PORT+i, so PORT+nodeIDs-1 must be a port too (PORT 0 picks
// free ports). A host name is left to the resolver.
func ListenProblem(listen string, nodeIDs int) string {
	if ip, err := netip.ParseAddr(listen); err == nil && !ip.Unmap().Is4() {
		return fmt.Sprintf("%q: %s is not an IPv4 address (capture's nodes listen on IPv4)", listen, listen)
	}
	if p := dhtboot.ListenProblem(listen); p != "" {
		return p
	}
	host, portStr, _ := net.SplitHostPort(listen)
	port, _ := strconv.Atoi(portStr)
	if ip, err := netip.ParseAddr(host); err == nil && !ip.Unmap().Is4() {
		return fmt.Sprintf("%q: %s is not an IPv4 address (capture's nodes listen on IPv4)", listen, host)
	}
	if n := max(nodeIDs, 1); port != 0 && port > 65536-n {
		return fmt.Sprintf("%q with --node-ids %d: node i listens on port %d+i, past 65535 for the last one; give a port of at most %d, or port 0 for free ports",
			listen, n, port, 65536-n)
	}
	return ""
}

// resolveBootstrap turns host:port strings into IPv4 addresses. A name
// that does not resolve is skipped; all failing is an error.
func resolveBootstrap(hostPorts []string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	var firstErr error
	for _, hp := range hostPorts {
		ua, err := net.ResolveUDPAddr("udp4", hp)
		if err == nil && ua.Port == 0 {
			err = errors.New("port 0")
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("capture: bootstrap %q: %v", hp, err)
			}
			continue
		}
		ap := ua.AddrPort()
		out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	if len(out) == 0 && firstErr != nil {
		return nil, exitcode.BadInput(firstErr)
	}
	return out, nil
}

// openNodes binds one UDP socket per ID: the listen port, then the
// following ones (or free ports when the port is 0).
func openNodes(r *runner, listen string, ids [][20]byte, seed uint64) ([]*node, error) {
	// checkOptions has checked listen (ListenProblem).
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, exitcode.BadInput(fmt.Errorf("capture: --dht-listen: %q: %v", listen, err))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, exitcode.BadInput(fmt.Errorf("capture: --dht-listen: %q: %v", listen, err))
	}
	var nodes []*node
	for i, id := range ids {
		p := 0
		if port != 0 {
			p = port + i
		}
		addr := net.JoinHostPort(host, strconv.Itoa(p))
		ua, err := net.ResolveUDPAddr("udp4", addr)
		if err != nil {
			// listen, as given: addr's port may be one it did not say.
			closeNodes(nodes)
			return nil, exitcode.BadInput(fmt.Errorf("capture: --dht-listen: %q: %v", listen, err))
		}
		sock, err := net.ListenUDP("udp4", ua)
		if err != nil {
			closeNodes(nodes)
			return nil, fmt.Errorf("capture: listening on %s: %w", addr, err)
		}
		_ = sock.SetReadBuffer(8 << 20)
		countDrops(sock)
		_ = sock.SetWriteBuffer(4 << 20)
		n := &node{r: r, id: id, sock: sock, pipe: newPipeConn(sock),
			fwd: rate.NewLimiter(libraryQueryRate, libraryQueryRate/10),
			rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		n.pipe.reach = r.reach
		n.tbl.Store(newTable(nil))
		n.good.Store(newTable(nil))
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// startLibrary starts the anacrolix server that keeps the node's routing
// table, on the node's pipe.
func (n *node) startLibrary(boot []netip.AddrPort, saved []contact) error {
	cfg := dht.NewDefaultServerConfig()
	cfg.Conn = n.pipe
	cfg.NodeId = n.id
	cfg.NoSecurity = true
	cfg.SendLimiter = n.r.libSend
	cfg.Logger = alog.Default.FilterLevel(alog.Disabled)
	if len(boot)+len(saved) > 0 {
		n.r.asked.Add(1)
	}
	cfg.StartingNodes = func() ([]dht.Addr, error) {
		var out []dht.Addr
		for _, a := range boot {
			out = append(out, dht.NewAddr(net.UDPAddrFromAddrPort(a)))
		}
		for _, c := range saved {
			out = append(out, dht.NewAddr(net.UDPAddrFromAddrPort(c.Addr)))
		}
		if len(out) == 0 {
			return nil, errors.New("no bootstrap nodes")
		}
		return out, nil
	}
	srv, err := dht.NewServer(cfg)
	if err != nil {
		return fmt.Errorf("capture: dht server: %w", err)
	}
	n.srv = srv
	for _, c := range saved {
		_ = srv.AddNode(krpc.NodeInfo{ID: c.ID, Addr: krpc.NodeAddr{IP: c.Addr.Addr().AsSlice(), Port: int(c.Addr.Port())}})
	}
	return nil
}

// warmCheckAfter is how long a node that starts from a saved table big
// enough to skip the bootstrap runs before it counts as bootstrapped (for
// the warning of runner.bootstrapped): as long as a bootstrap may take.
var warmCheckAfter = 20 * time.Second

// maintain bootstraps the node, keeps its table snapshot fresh, and
// bootstraps again when the table runs dry: fewer than 8 nodes, or, from
// warmCheckAfter on, fewer than 8 that replies may hand out (confirm.go):
// a --passive warm start from a saved table has no walk to confirm them,
// and handed out none for the whole run.
func (n *node) maintain(ctx context.Context, boot []netip.AddrPort) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	start, lastBoot := time.Now(), time.Time{}
	first := true
	for {
		warm := time.Since(start) >= warmCheckAfter
		if first && warm && lastBoot.IsZero() {
			// A warm start from saved contacts skipped the bootstrap:
			// they have had as long to answer as routers would.
			first = false
			n.r.bootstrapped()
		}
		if dry := n.srv.NumNodes() < 8 || (warm && n.good.Load().len() < 8); dry && time.Since(lastBoot) > 30*time.Second {
			lastBoot = time.Now()
			bctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			_, _ = n.srv.BootstrapContext(bctx)
			cancel()
			if first && ctx.Err() == nil {
				first = false
				n.r.bootstrapped()
			}
		}
		nis := inReach(n.r.reach, n.srv.Nodes())
		n.tbl.Store(newTable(nis))
		n.good.Store(newTable(confirmedOnly(nis, &n.pipe.asks, n.r.crawler)))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// bootstrapped is called by each node once its first bootstrap has ended
// (not cut short by the end of the run), or warmCheckAfter into a warm
// start that skipped it. After the last node's, it warns
// when no DHT node has answered any of them (routers nor saved contacts):
// a firewall or a dead network, which would otherwise make an empty pass
// that looks like a quiet one (responses_in stays 0 in the stats). A run
// that had no one to ask (--bootstrap "" and no saved contacts) says
// that instead, as an info line.
func (r *runner) bootstrapped() {
	if int(r.booted.Add(1)) != r.nodes || r.c.responses.Load() != 0 {
		return
	}
	if r.asked.Load() == 0 {
		r.opts.Logger.Info("capture: no bootstrap: waiting for incoming queries", "nodes", r.nodes)
		return
	}
	r.opts.Logger.Warn("capture: no DHT node answered the bootstrap; nothing is captured until one does", "nodes", r.nodes)
}

func closeNodes(nodes []*node) {
	for _, n := range nodes {
		if n.srv != nil {
			n.srv.Close()
		}
		n.pipe.Close()
		n.sock.Close()
	}
}

// state collects what the next run should start from.
func (r *runner) state(nodes []*node) state {
	var s state
	for _, n := range nodes {
		var cs []contact
		for _, ni := range n.srv.Nodes() {
			if ip4 := ni.Addr.IP.To4(); ip4 != nil && ni.Addr.Port > 0 && ni.Addr.Port < 65536 {
				cs = append(cs, contact{ID: ni.ID, Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip4)), uint16(ni.Addr.Port))})
			}
		}
		s.Nodes = append(s.Nodes, stateNode{ID: fmt.Sprintf("%x", n.id), Table: toState(cs)})
	}
	if r.crawler != nil {
		s.Samplers = toState(r.crawler.samplers(500))
		s.Resting = r.crawler.resting(time.Now(), maxResting)
	}
	return s
}
