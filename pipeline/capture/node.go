package capture

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/anacrolix/dht/v2"
	"golang.org/x/time/rate"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
)

// libraryQueryRate is how many incoming queries per second a node passes
// on to its anacrolix server so that the routing table learns of the
// senders; the read loop answers them all itself.
const libraryQueryRate = 200

// maxForwardedSenders bounds the senders a node remembers the ID of
// (libraryMayLearn): about 64 bytes each, 256 KiB a node when full.
const maxForwardedSenders = 4096

// libraryQueryRateOut and libraryQueryBurstOut bound the queries the
// run's anacrolix servers send together (runner.libSend): with
// --node-ids 256, a limit per node let 25,600 queries a second out
// while the nodes bootstrapped.
const (
	libraryQueryRateOut  = 100
	libraryQueryBurstOut = 20
)

// flushEvery bounds how long an observation waits in a node's batch.
const flushEvery = 200 * time.Millisecond

// node is one capture DHT node. Everything but tbl and good is owned by
// its read loop.
type node struct {
	r    *runner
	id   [20]byte
	sock *net.UDPConn
	pipe *pipeConn
	srv  *dht.Server
	tbl  atomic.Pointer[table] // the routing table's nodes in reach
	good atomic.Pointer[table] // those of them replies hand out (confirm.go)
	fwd  *rate.Limiter
	rng  *rand.Rand

	msg       krpc.Msg
	out       []byte
	nodes     []byte
	batch     []schema.Observation
	slab      []byte
	lastFrom  netip.AddrPort
	lastStr   string
	recent    [256][20]byte         // recently announced hashes, for our own BEP 51 replies
	sampled   map[[20]byte]struct{} // the samples of the reply being recorded (crawler.deliver)
	peers     peerStore             // announced peers, for get_peers "values"
	values    []byte
	now       time.Time // the packet being handled's arrival
	nrecent   int
	lastFlush time.Time
	drops     uint32                      // the socket's drops so far, as the kernel last said (drops.go)
	fwdIDs    map[netip.AddrPort][20]byte // the ID each sender's queries reach the library under (libraryMayLearn)

	// This node's own counters, for --debug (debugNodes): the run's
	// counters add up all nodes'.
	packetsIn, queriesIn, responsesIn, observed int64
}

// Draining at stop: once stop is closed, the read loop goes on reading
// (and answering, and recording) until the socket has been quiet for
// drainQuiet, and for at most drainMax in all, so that replies and
// queries already queued or in flight are not lost, while a node that
// never falls quiet (any busy node on the real DHT) still stops.
const (
	drainQuiet = 200 * time.Millisecond
	drainMax   = 2 * time.Second
)

// serve is the read loop. It returns when stop is closed (after draining
// the socket, see drainQuiet) or the socket is closed.
func (n *node) serve(stop <-chan struct{}) {
	buf := make([]byte, 1<<16)
	oob := make([]byte, oobSpace)
	var deadline, drainEnd time.Time
	draining := false
	n.lastFlush = time.Now()
	for {
		now := time.Now()
		if len(n.batch) > 0 && now.Sub(n.lastFlush) >= flushEvery {
			n.flush(now)
			now = time.Now() // the flush may have waited for the writer
		}
		if !draining {
			select {
			case <-stop:
				draining = true
				drainEnd = now.Add(n.r.opts.drainMax)
			default:
			}
		}
		if draining {
			// Set afresh right before each read, after the previous
			// packet was handled (which may have waited for the writer):
			// only a socket that stayed silent for drainQuiet ends the
			// drain, not a slow handler. A deadline already passed makes
			// the read fail at once, without looking at the socket.
			d := now.Add(n.r.opts.drainQuiet)
			if d.After(drainEnd) {
				d = drainEnd
			}
			n.sock.SetReadDeadline(d)
		} else if deadline.Sub(now) < 50*time.Millisecond {
			deadline = now.Add(100 * time.Millisecond)
			n.sock.SetReadDeadline(deadline)
		}
		nb, oobn, _, from, err := n.sock.ReadMsgUDPAddrPort(buf, oob)
		if oobn > 0 {
			if d, ok := dropsIn(oob[:oobn]); ok && d != n.drops {
				n.r.c.socketDropped.Add(int64(d - n.drops)) // uint32: the kernel's count wraps
				n.drops = d
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if draining {
					n.flush(time.Now())
					return
				}
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				n.flush(time.Now())
				return
			}
			continue // e.g. ICMP port unreachable surfacing as a read error
		}
		// The time of arrival, not of the loop's top: the read may have
		// waited up to its deadline, and a revisit scheduled from an
		// earlier now would come before the interval the node asked for.
		n.handle(buf[:nb], from, time.Now())
	}
}

// handle processes one packet, b, which it may change (a response for
// the library has its nodes cut, krpc.TrimNodes).
func (n *node) handle(b []byte, from netip.AddrPort, now time.Time) {
	c := &n.r.c
	c.packetsIn.Add(1)
	n.packetsIn++
	n.now = now
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	m := &n.msg
	if err := krpc.Parse(b, m); err != nil {
		c.malformed.Add(1)
		if t, ok := krpc.QueryID(b); ok { // a query with invalid arguments
			n.send(krpc.AppendError(n.out[:0], t, krpc.ErrProtocol, "invalid arguments"), from)
		}
		return
	}
	if m.Y == krpc.Query {
		n.queriesIn++
		n.query(m, b, from, now)
		return
	}
	c.responses.Add(1)
	n.responsesIn++
	if cr := n.r.crawler; cr != nil && cr.owns(m.T) {
		cr.deliver(n, m, from, now)
		return
	}
	// Only the answer to one of the library's queries, with the ID the
	// library gave it (pipeConn puts one of ours on the wire).
	orig, ok := n.pipe.asks.reply(from, m)
	if !ok {
		return
	}
	b = krpc.ReplaceT(b, m, orig)
	if krpc.Parse(b, m) != nil {
		return
	}
	// The library's traversals (bootstrap, refresh) would query every
	// node a reply lists: it gets the first maxContactsPerReply, as the
	// walk takes (krpc.TrimNodes).
	if !n.pipe.push(krpc.TrimNodes(b, m, maxContactsPerReply), from) {
		c.libraryDropped.Add(1)
	}
}

// query answers one incoming query and records what it tells.
func (n *node) query(m *krpc.Msg, b []byte, from netip.AddrPort, now time.Time) {
	c := &n.r.c
	mi := methodIndex(m.Q)
	c.queries[mi].Add(1)
	if len(m.ID) != 20 {
		n.fail(m, from, "query without a 20-byte id")
		return
	}
	// find_node, get_peers and sample_infohashes replies carry "nodes"
	// even when the table has none in reach to list (BEP 5 requires it
	// of find_node, and of a get_peers reply without values).
	reply := krpc.Reply{ID: n.id[:], HasNodes: mi == mFindNode || mi == mGetPeers || mi == mSampleInfohashes}
	tbl := n.good.Load()
	switch mi {
	case mPing:
	case mFindNode:
		if m.Target == nil {
			n.fail(m, from, "find_node without target")
			return
		}
		n.nodes = tbl.appendClosest(n.nodes[:0], m.Target, 8)
		reply.Nodes = n.nodes
	case mGetPeers:
		if m.InfoHash == nil {
			n.fail(m, from, "get_peers without info_hash")
			return
		}
		n.recordQuery(mi, m, from, 0, now)
		tok := n.r.tokens.make(now, from.Addr())
		reply.Token = tok[:]
		n.values = n.peers.appendValues(n.values[:0], m.InfoHash, now)
		reply.Values = n.values
		n.nodes = tbl.appendClosest(n.nodes[:0], m.InfoHash, 8)
		reply.Nodes = n.nodes
	case mAnnouncePeer:
		if m.InfoHash == nil {
			n.fail(m, from, "announce_peer without info_hash")
			return
		}
		if !n.r.tokens.valid(now, from.Addr(), m.Token) {
			c.badTokens.Add(1)
			n.send(krpc.AppendError(n.out[:0], m.T, krpc.ErrProtocol, "bad token"), from)
			return
		}
		// BEP 5: implied_port != 0 means the UDP source port, and port
		// is ignored. A query with neither (port is required) still
		// announced the hash, so it is recorded, with a null peer_port
		// (0) rather than a source port the sender never claimed.
		var port int64
		switch {
		case m.ImpliedPort:
			port = int64(from.Port())
		case m.HasPort:
			port = m.Port
		}
		if (m.ImpliedPort || m.HasPort) && (port <= 0 || port > 65535) {
			n.fail(m, from, "announce_peer with a bad port")
			return
		}
		n.recordQuery(mi, m, from, int32(port), now)
		// Stored to be handed out: not one nobody can dial, nor one out
		// of the run's reach (a LAN neighbour's, in a run on the
		// Internet, as the table's nodes are not: replies told the
		// Internet of private addresses to dial).
		if peer := netip.AddrPortFrom(from.Addr(), uint16(port)); port > 0 && n.r.reach.OK(peer) {
			n.peers.add([20]byte(m.InfoHash), peer, now)
		}
	case mSampleInfohashes:
		if m.Target == nil {
			n.fail(m, from, "sample_infohashes without target")
			return
		}
		reply.HasSamples = true
		reply.Interval = int64(n.r.opts.SampleInterval / time.Second)
		reply.Num = int64(min(n.nrecent, len(n.recent)))
		reply.Samples = n.samples(n.nodes[:0])
		n.nodes = tbl.appendClosest(reply.Samples, m.Target, 8)
		reply.Samples = n.nodes[:len(reply.Samples)]
		reply.Nodes = n.nodes[len(reply.Samples):]
	default:
		n.send(krpc.AppendError(n.out[:0], m.T, krpc.ErrMethodUnknown, "Method Unknown"), from)
		return
	}
	var ip [6]byte
	a4 := from.Addr().As4()
	copy(ip[:], a4[:])
	ip[4], ip[5] = byte(from.Port()>>8), byte(from.Port())
	n.send(krpc.AppendReply(n.out[:0], m.T, reply, ip[:]), from)
	if n.libraryMayLearn(from, m.ID) && n.fwd.Allow() && !n.pipe.push(b, from) {
		c.libraryDropped.Add(1)
	}
}

// libraryMayLearn reports whether a query from from with node ID id may
// reach the library: only under the ID that sender's queries reached it
// under first. The library keys its routing table by address and ID, so
// a sender that put a new ID in each query (a forged flood, or a node
// that changes its ID per packet) took a table entry per ID: 3,000 pings
// from one socket filled the table (65 entries, all that address), which
// the state saves and the library's upkeep pings. The senders remembered
// are forgotten all at once past maxForwardedSenders, after which a
// sender may add one ID more.
func (n *node) libraryMayLearn(from netip.AddrPort, id []byte) bool {
	if prev, ok := n.fwdIDs[from]; ok {
		return string(prev[:]) == string(id)
	}
	if n.fwdIDs == nil || len(n.fwdIDs) >= maxForwardedSenders {
		n.fwdIDs = make(map[netip.AddrPort][20]byte)
	}
	n.fwdIDs[from] = [20]byte(id)
	return true
}

// fail counts a malformed query and answers it with a protocol error.
func (n *node) fail(m *krpc.Msg, from netip.AddrPort, why string) {
	n.r.c.malformed.Add(1)
	n.send(krpc.AppendError(n.out[:0], m.T, krpc.ErrProtocol, why), from)
}

// send writes a reply (or an error reply) to to, unless that address
// has had its share of the run's replies (see replyLimiter).
func (n *node) send(b []byte, to netip.AddrPort) {
	n.out = b
	if !n.r.replies.allow(to.Addr(), n.now) {
		n.r.c.repliesLimited.Add(1)
		return
	}
	_, _ = n.sock.WriteToUDPAddrPort(b, to)
}

// samples appends up to 20 recently announced hashes, from a random place
// in the ring (which holds each hash once, see record): consecutive
// entries, so never one twice.
func (n *node) samples(dst []byte) []byte {
	have := min(n.nrecent, len(n.recent))
	if have <= 20 {
		for i := range have {
			dst = append(dst, n.recent[i][:]...)
		}
		return dst
	}
	start := n.rng.IntN(have)
	for i := range 20 {
		dst = append(dst, n.recent[(start+i)%have][:]...)
	}
	return dst
}

// recordQuery records the get_peers or announce_peer m (mi), unless a
// fetch on the same --dht-state sent it (ownlookups.go), its sender sent
// one for the hash within the window, or (a get_peers) the hash has had
// its cap of them in its window (recent.go). A fetch's is left out
// first: it takes no place in the recent set and no part of the cap.
func (n *node) recordQuery(mi int, m *krpc.Msg, from netip.AddrPort, port int32, now time.Time) {
	if n.r.fetch.own(m.ID, now) {
		n.r.c.fetchLookups.Add(1)
		return
	}
	if n.r.recent.repeat(from, m.InfoHash, mi, now) {
		n.r.c.repeatsDropped.Add(1)
		return
	}
	if mi == mGetPeers && n.r.hashCap.full(m.InfoHash, now) {
		n.r.c.hashCapDropped.Add(1)
		return
	}
	source := schema.SourceGetPeers
	if mi == mAnnouncePeer {
		source = schema.SourceAnnouncePeer
	}
	n.record(m.InfoHash, source, m.ID, from, port, now)
}

// record adds one observation to the batch.
func (n *node) record(ih []byte, source string, id []byte, from netip.AddrPort, port int32, now time.Time) {
	if from != n.lastFrom || n.lastStr == "" {
		n.lastFrom, n.lastStr = from, from.String()
	}
	var nid []byte
	if len(id) == 20 {
		if len(n.slab) < 20 {
			n.slab = make([]byte, 20*1024)
		}
		nid = n.slab[:20:20]
		copy(nid, id)
		n.slab = n.slab[20:]
	}
	n.batch = append(n.batch, schema.Observation{
		InfoHash:   [20]byte(ih),
		HashType:   schema.HashV1,
		ObservedAt: n.r.opts.Clock.Now().UnixMilli(),
		Source:     source,
		NodeAddr:   n.lastStr,
		NodeID:     nid,
		PeerPort:   port,
		RunID:      n.r.opts.RunID,
	})
	if source == schema.SourceAnnouncePeer {
		// Like a storing node, offer in our own BEP 51 samples only hashes
		// someone announced to us, never mere lookup targets; each once
		// (clients re-announce every 30 minutes), so that num counts
		// distinct hashes and samples repeat none.
		n.remember([20]byte(ih))
	}
	if len(n.batch) >= n.r.opts.BatchSize {
		n.flush(now)
	}
}

// flush hands the batch to the writer.
func (n *node) flush(now time.Time) {
	n.lastFlush = now
	if len(n.batch) == 0 {
		return
	}
	n.observed += int64(len(n.batch))
	n.r.batches <- n.batch
	n.batch = make([]schema.Observation, 0, n.r.opts.BatchSize)
}

// remember adds h to the ring of recently announced hashes, unless it is
// there already.
func (n *node) remember(h [20]byte) {
	for i := range min(n.nrecent, len(n.recent)) {
		if n.recent[i] == h {
			return
		}
	}
	n.recent[n.nrecent%len(n.recent)] = h
	n.nrecent++
}
