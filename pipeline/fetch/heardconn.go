package fetch

import (
	"net"
	"net/netip"
	"sync"
	"time"

	ckrpc "github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/dhtwalk"
	"github.com/infohash/infohash/internal/reach"
)

// heardConn is the DHT node's socket. It sends queries only to addresses
// in the run's reach (see internal/reach): the library's traversals query
// every node a reply lists, and a broken or hostile node lists loopback
// and private addresses (its replies to whoever queried it go out as
// before). It notes the nodes that answered a query of ours: a datagram
// that decodes as a KRPC response (y "r") from the address a query went
// to, with that query's transaction ID. Any host can send datagrams, so
// nothing else counts, and what it keeps is bounded (recent): the queries
// awaiting an answer, and the addresses that answered, the most recent
// ones first.
type heardConn struct {
	net.PacketConn
	reach reach.Rule                       // where queries may go
	guard func(network, addr string) error // Options.guard
	mu    sync.Mutex
	asked recent[queryKey]       // queries sent, not yet answered
	heard recent[netip.AddrPort] // addresses that answered one
	now   func() time.Time
}

// A query is remembered for askedTTL to 2×askedTTL, or for the next
// maxAsked to 2×maxAsked queries when they come faster; heardConn keeps
// the last maxHeard to 2×maxHeard addresses that answered (the routing
// table holds at most 160×8).
const (
	maxAsked = 1 << 15
	askedTTL = 30 * time.Second
	maxHeard = 1 << 15
)

func newHeardConn(pc net.PacketConn, r reach.Rule) *heardConn {
	return &heardConn{PacketConn: pc, reach: r, now: time.Now,
		asked: recent[queryKey]{max: maxAsked, ttl: askedTTL},
		heard: recent[netip.AddrPort]{max: maxHeard}}
}

// queryKey is a query sent: where, and its transaction ID (the DHT
// library's are a few bytes; a longer one is not tracked).
type queryKey struct {
	addr netip.AddrPort
	t    [8]byte
	n    uint8
}

func keyOf(addr net.Addr, t []byte) (queryKey, bool) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok || len(t) > 8 {
		return queryKey{}, false
	}
	k := queryKey{addr: unmapped(ua.AddrPort()), n: uint8(len(t))}
	copy(k.t[:], t)
	return k, true
}

// WriteTo sends b to addr, noting a query first (its answer may be read
// before WriteTo returns). A query (or what does not decode as a reply)
// to an address out of reach fails with reach.ErrUnreachable, sending
// nothing.
func (c *heardConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	var m ckrpc.Msg
	parsed := ckrpc.Parse(b, &m) == nil
	query := parsed && m.Y == ckrpc.Query
	if query || !parsed {
		ua, ok := addr.(*net.UDPAddr)
		if !ok || !c.reach.OK(unmapped(ua.AddrPort())) {
			return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: reach.ErrUnreachable}
		}
	}
	if c.guard != nil {
		if err := c.guard("udp", addr.String()); err != nil {
			return 0, &net.OpError{Op: "write", Net: "udp", Addr: addr, Err: err}
		}
	}
	if query {
		if k, ok := keyOf(addr, m.T); ok {
			c.mu.Lock()
			c.asked.add(k, c.now())
			c.mu.Unlock()
		}
	}
	return c.PacketConn.WriteTo(b, addr)
}

// ReadFrom reads a datagram, noting its sender when it answers a query,
// and cutting a response's nodes to the first dhtwalk.MaxNodesPerReply.
func (c *heardConn) ReadFrom(b []byte) (int, net.Addr, error) {
	nr, addr, err := c.PacketConn.ReadFrom(b)
	if err != nil {
		return nr, addr, err
	}
	var m ckrpc.Msg
	if ckrpc.Parse(b[:nr], &m) == nil && m.Y == ckrpc.Response {
		if k, ok := keyOf(addr, m.T); ok {
			c.mu.Lock()
			if c.asked.remove(k) {
				c.heard.add(k.addr, c.now())
			}
			c.mu.Unlock()
		}
		// The library's own traversals (bootstrap, bucket refresh)
		// would query every node a reply lists; lookups keep as many
		// (dhtwalk.MaxNodesPerReply).
		nr = len(ckrpc.TrimNodes(b[:nr], &m, dhtwalk.MaxNodesPerReply))
	}
	return nr, addr, err
}

// answered reports whether ap answered a query of ours (recently, when
// many nodes did).
func (c *heardConn) answered(ap netip.AddrPort) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard.has(ap)
}

// recent is a set that forgets its oldest keys, in two generations: new
// keys go into cur, which becomes old (dropping the old one) once it holds
// max keys or, with a ttl, once it began over ttl ago. It holds at most
// 2×max keys, and a key stays at least until max more were added (or ttl
// passed).
type recent[K comparable] struct {
	cur, old map[K]struct{}
	since    time.Time // when cur began
	max      int
	ttl      time.Duration // 0: none
}

func (r *recent[K]) add(k K, now time.Time) {
	if r.cur == nil || len(r.cur) >= r.max || (r.ttl > 0 && now.Sub(r.since) > r.ttl) {
		r.old, r.cur, r.since = r.cur, make(map[K]struct{}), now
	}
	r.cur[k] = struct{}{}
}

func (r *recent[K]) has(k K) bool {
	_, in := r.cur[k]
	_, inOld := r.old[k]
	return in || inOld
}

// remove removes k, reporting whether it was there.
func (r *recent[K]) remove(k K) bool {
	if _, ok := r.cur[k]; ok {
		delete(r.cur, k)
		return true
	}
	if _, ok := r.old[k]; ok {
		delete(r.old, k)
		return true
	}
	return false
}

// len is the number of keys held.
func (r *recent[K]) len() int { return len(r.cur) + len(r.old) }
