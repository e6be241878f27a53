package capture

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

const (
	queryTimeout  = 3 * time.Second
	maxRemotes    = 1 << 20 // bound on nodes remembered by the walk
	maxFresh      = 1 << 16 // bound on nodes waiting for a first visit
	retryAfter    = 5 * time.Second
	maxFailures   = 2
	kindSample    = 's'
	kindFindNode  = 'f'
	crawlerTIDTag = 'i' // first byte of our transaction IDs; see owns
)

// Bounds on what one node can make the walk query. A reply's "nodes" is
// the K = 8 closest nodes (BEP 5), yet one datagram can list 2,500, all
// of them a victim's ports: the walk takes the first maxContactsPerReply
// of a reply, and at most maxPortsPerIP ports of one public address (the
// loopback and private ranges a run was pointed into are the user's own
// networks, where every node may share one address: no bound there).
const (
	maxContactsPerReply = 16
	maxPortsPerIP       = 8
)

// When a BEP 51 node is sampled again. Its reply's interval is a request
// not to be sampled before that many seconds; the crawler honours it,
// clamped to [minRevisit, maxRevisit] (minRevisitLocal for a node in the
// loopback or private ranges).
const (
	// minRevisit is the floor for a public node, for an interval of 0
	// (BEP 51 allows it: the node keeps no precomputed sample) or one
	// that is merely short: the walk is to survey the DHT, not to poll
	// one node, which at the old 1 s floor was sampled 600 times in a
	// 10-minute run.
	minRevisit = time.Minute
	// minRevisitLocal is the floor for a node in the loopback or
	// private ranges, which the walk queries only in a run pointed into
	// them (internal/reach): the test networks (the loopback testnet,
	// tools/libtorrentnode) ask for 1 s and their tests wait for it.
	minRevisitLocal = time.Second
	// maxRevisit is BEP 51's maximum interval, 21600 s (6 h), which is
	// also libtorrent's default and the most its client accepts.
	maxRevisit = 21600 * time.Second
	// defaultRevisit is used when a reply carries samples but no
	// interval: such a node is treated like a libtorrent node with its
	// default settings, which reports BEP 51's maximum (21600 s), rather
	// than re-sampled as fast as the floor allows. Within one run of
	// normal length that means each such node is sampled once.
	defaultRevisit = maxRevisit
)

// revisitAfter is how long to wait before sampling again the node at
// from that sent BEP 51 reply m.
func revisitAfter(m *krpc.Msg, from netip.AddrPort) time.Duration {
	if !m.HasInterval {
		return defaultRevisit
	}
	floor := minRevisit
	if reach.ClassOf(from.Addr()) != reach.Public {
		floor = minRevisitLocal
	}
	// Clamp the seconds before converting: a huge interval would
	// overflow time.Duration into a negative wait.
	s := min(max(m.Interval, int64(floor/time.Second)), int64(maxRevisit/time.Second))
	return time.Duration(s) * time.Second
}

// Remote node states in the walk.
const (
	stateNew = iota
	stateBEP51
	stateNoBEP51
	stateDead
)

type remote struct {
	id       [20]byte
	state    uint8
	fails    uint8
	answered bool      // a response to one of our queries came from it, with id (see confirmedOnly)
	next     time.Time // a BEP 51 node's: not sampled again before (see resting)
}

type pending struct {
	addr netip.AddrPort
	sent time.Time
	kind byte
}

// crawler is the active BEP 51 walk: it sends sample_infohashes to every
// node it learns of, again after each node's interval, and find_node to
// those that answer 204. Responses reach it through the nodes' read loops
// (deliver); queries go out on the nodes' sockets in turn.
type crawler struct {
	r     *runner
	nodes []*node
	lim   *rate.Limiter

	mu      sync.Mutex
	rng     *rand.Rand
	pending map[uint32]pending
	remotes map[netip.AddrPort]*remote
	perIP   map[netip.Addr]uint8 // remotes per public address, up to maxPortsPerIP
	fresh   []netip.AddrPort     // never queried
	finds   []netip.AddrPort     // answered 204: ask for nodes instead
	due     dueHeap              // BEP 51 nodes to sample again
	turn    int
	out     []byte
}

func newCrawler(r *runner, nodes []*node, maxRPS float64, seed uint64) *crawler {
	lim := rate.NewLimiter(rate.Inf, 0)
	if maxRPS > 0 {
		lim = rate.NewLimiter(rate.Limit(maxRPS), max(1, int(maxRPS/10)))
	}
	return &crawler{
		r: r, nodes: nodes, lim: lim,
		rng:     rand.New(rand.NewPCG(seed, 51)),
		pending: map[uint32]pending{},
		remotes: map[netip.AddrPort]*remote{},
		perIP:   map[netip.Addr]uint8{},
	}
}

// owns reports whether t is one of our transaction IDs. Ours are 4 bytes
// starting with 'i'; the library's are uvarints, whose first byte has
// the high bit set whenever more bytes follow, so they never collide.
func (c *crawler) owns(t []byte) bool { return len(t) == 4 && t[0] == crawlerTIDTag }

// add queues addr for a first visit if it is new.
func (c *crawler) add(addr netip.AddrPort, id []byte) {
	if len(c.fresh) >= maxFresh {
		return
	}
	if c.admit(addr, id) != nil {
		c.fresh = append(c.fresh, addr)
	}
}

// admit makes addr a known remote, if it is new and the walk may query
// it, and returns it (nil otherwise).
func (c *crawler) admit(addr netip.AddrPort, id []byte) *remote {
	if !c.r.reach.OK(addr) {
		return nil // not a public address, nor in a range the run was pointed into
	}
	if _, ok := c.remotes[addr]; ok || len(c.remotes) >= maxRemotes {
		return nil
	}
	if len(id) == 20 && c.isOurs(id) {
		return nil // one of our own nodes: sampling it would echo our own records
	}
	public := reach.ClassOf(addr.Addr()) == reach.Public
	if public && c.perIP[addr.Addr()] >= maxPortsPerIP {
		return nil
	}
	if public {
		c.perIP[addr.Addr()]++
	}
	rm := &remote{}
	if len(id) == 20 {
		rm.id = [20]byte(id)
	}
	c.remotes[addr] = rm
	c.r.c.nodesKnown.Add(1)
	return rm
}

// isOurs reports whether id is one of this run's node IDs.
func (c *crawler) isOurs(id []byte) bool {
	for _, n := range c.nodes {
		if string(n.id[:]) == string(id) {
			return true
		}
	}
	return false
}

// addAll queues several contacts (from the routing table or state).
func (c *crawler) addAll(cs []contact) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ct := range cs {
		c.add(ct.Addr, ct.ID[:])
	}
}

// run sends queries until ctx ends.
func (c *crawler) run(ctx context.Context) {
	expire := time.NewTicker(500 * time.Millisecond)
	defer expire.Stop()
	for {
		if err := c.lim.Wait(ctx); err != nil {
			return
		}
		for {
			now := time.Now()
			if c.sendNext(now) {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-expire.C:
				c.expire(time.Now())
			case <-time.After(20 * time.Millisecond):
			}
		}
		select {
		case <-expire.C:
			c.expire(time.Now())
		default:
		}
	}
}

// sendNext sends one query if any node is waiting for one.
func (c *crawler) sendNext(now time.Time) bool {
	c.mu.Lock()
	var (
		addr netip.AddrPort
		kind byte = kindSample
	)
	switch {
	case len(c.finds) > 0:
		addr, c.finds = c.finds[0], c.finds[1:]
		kind = kindFindNode
	case len(c.due) > 0 && !c.due[0].at.After(now):
		addr = heap.Pop(&c.due).(dueItem).addr
	case len(c.fresh) > 0:
		addr, c.fresh = c.fresh[0], c.fresh[1:]
	default:
		c.mu.Unlock()
		return false
	}
	// A random ID, not the next of a count: a response is taken as the
	// queried node's by its address and ID, and a forger who saw one of
	// our IDs would know the next ones. The runtime's generator
	// (ChaCha8), not c.rng: PCG's outputs (in our targets) give away its
	// state.
	key := rand.Uint32() & 0xffffff
	for _, taken := c.pending[key]; taken; _, taken = c.pending[key] {
		key = rand.Uint32() & 0xffffff
	}
	t := []byte{crawlerTIDTag, byte(key >> 16), byte(key >> 8), byte(key)}
	c.pending[key] = pending{addr: addr, sent: now, kind: kind}
	n := c.nodes[c.turn%len(c.nodes)]
	c.turn++
	var target [20]byte
	for i := range target {
		target[i] = byte(c.rng.Uint32())
	}
	if kind == kindSample {
		c.out = krpc.AppendSampleInfohashes(c.out[:0], t, n.id[:], target[:])
		c.r.c.sampleQueries.Add(1)
	} else {
		c.out = krpc.AppendFindNode(c.out[:0], t, n.id[:], target[:])
		c.r.c.findNodeQueries.Add(1)
	}
	b := c.out
	c.mu.Unlock()
	_, _ = n.sock.WriteToUDPAddrPort(b, addr)
	return true
}

// expire gives up on queries unanswered for queryTimeout; a node gets
// maxFailures chances.
func (c *crawler) expire(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.pending {
		if now.Sub(p.sent) < queryTimeout {
			continue
		}
		delete(c.pending, k)
		c.r.c.queryTimeouts.Add(1)
		rm := c.remotes[p.addr]
		if rm == nil {
			continue
		}
		rm.fails++
		if rm.fails >= maxFailures {
			rm.state = stateDead
			continue
		}
		if p.kind == kindFindNode {
			c.finds = append(c.finds, p.addr)
		} else {
			heap.Push(&c.due, dueItem{at: now.Add(retryAfter), addr: p.addr})
		}
	}
}

// deliver handles a response to one of our queries. It runs in the read
// loop of node n, whose batch receives the samples.
func (c *crawler) deliver(n *node, m *krpc.Msg, from netip.AddrPort, now time.Time) {
	key := uint32(m.T[1])<<16 | uint32(m.T[2])<<8 | uint32(m.T[3])
	c.mu.Lock()
	p, ok := c.pending[key]
	if !ok || p.addr != from {
		c.mu.Unlock()
		return // late, or not from whom we asked
	}
	delete(c.pending, key)
	rm := c.remotes[from]
	if rm == nil {
		rm = &remote{}
		c.remotes[from] = rm
	}
	rm.fails = 0
	if len(m.ID) == 20 {
		rm.id = [20]byte(m.ID)
		if c.isOurs(m.ID) {
			rm.state = stateDead
			c.mu.Unlock()
			return
		}
		rm.answered = m.Y == krpc.Response
	}
	parseCompact(m.Nodes[:min(len(m.Nodes), maxContactsPerReply*26)], func(ct contact) { c.add(ct.Addr, ct.ID[:]) })
	var samples []byte
	switch {
	case m.Y == krpc.Error && p.kind == kindSample && m.ErrCode == krpc.ErrMethodUnknown,
		m.Y == krpc.Response && p.kind == kindSample && !m.HasSamples:
		c.r.c.sampleUnsupported.Add(1)
		rm.state = stateNoBEP51
		if len(m.Nodes) == 0 {
			c.finds = append(c.finds, from)
		}
	case m.Y == krpc.Error:
		rm.state = stateDead
	case p.kind == kindSample:
		c.r.c.sampleResponses.Add(1)
		c.r.c.samples.Add(int64(len(m.Samples) / 20))
		rm.state = stateBEP51
		rm.next = now.Add(revisitAfter(m, from))
		heap.Push(&c.due, dueItem{at: rm.next, addr: from})
		samples = m.Samples
	}
	c.mu.Unlock()
	// Every sample, 20 bytes each: samples[i*20:(i+1)*20], once. A reply
	// that repeats one (BEP 51 samples are distinct stored hashes; a
	// 64 KB reply holds 3,276) would otherwise count it as that many
	// sightings: seen_count and activity, which rank what fetch tries.
	if n.sampled == nil {
		n.sampled = map[[20]byte]struct{}{}
	}
	clear(n.sampled)
	for i := 0; i+20 <= len(samples); i += 20 {
		h := [20]byte(samples[i : i+20])
		if _, dup := n.sampled[h]; dup {
			continue
		}
		n.sampled[h] = struct{}{}
		n.record(samples[i:i+20], schema.SourceSampleInfohashes, m.ID, from, 0, now)
	}
}

// samplers returns up to k nodes known to answer BEP 51, for the state
// file.
func (c *crawler) samplers(k int) []contact {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []contact
	for addr, rm := range c.remotes {
		if rm.state == stateBEP51 && len(out) < k {
			out = append(out, contact{ID: rm.id, Addr: addr})
		}
	}
	return out
}

type dueItem struct {
	at   time.Time
	addr netip.AddrPort
}

type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// feed adds the nodes' routing tables to the walk every few seconds.
func (c *crawler) feed(ctx context.Context, nodes []*node) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		for _, n := range nodes {
			tb := n.tbl.Load()
			cs := make([]contact, 0, tb.len())
			for _, comp := range tb.comp {
				parseCompact(comp[:], func(ct contact) { cs = append(cs, ct) })
			}
			c.addAll(cs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
