package capture

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/anacrolix/dht/v2/krpc"

	ours "github.com/infohash/infohash/formats/krpc"
)

// Which routing-table nodes a reply hands out. The library adds to its
// table every node that sends it a query (the read loop passes it some),
// and its Nodes lists them all, whether or not they ever answered: so a
// query with a forged source put that address (a victim's) into the
// "nodes" capture handed to everyone asking near its ID. BEP 5 asks for
// the closest *good* nodes; libtorrent hands out only nodes that have
// answered it. A node's replies list only the table's nodes that
// answered one of the run's queries, with the ID they are listed under
// (confirmed): the walk's (crawler.confirmed, until it gives up on the
// node) or its library's, which the pipe tells apart by transaction ID
// (asks). The rest of the table is still crawled, saved and counted.

// Bounds on the library's bookkeeping (per node): its queries in flight,
// forgotten after askTimeout (the library sends a query at most three
// times, 2 s apart, then gives it up), and the nodes that answered one,
// kept for as long as they stay in its table.
const (
	maxAsks     = 4096
	askTimeout  = 30 * time.Second
	maxAnswered = 1 << 14
)

// libraryTIDTag is the first byte of the transaction IDs the library's
// queries carry on the wire: 4 bytes, random but for it, as the walk's
// (crawlerTIDTag) are. The library issues its own from one counter per
// process (0, 1, 2..., as uvarints), and takes a response from the
// queried address with the ID: a forger spoofing that address (a
// bootstrap router, which every run queries first) who guessed the count
// fed it nodes of its choice, and confirmed the address under an ID of
// its choice. pipeConn puts a random ID on each query and gives the
// library's back to the response that carries it (asks).
const libraryTIDTag = 'l'

// askEntry is a library query in flight: when it went, and the ID the
// library gave it.
type askEntry struct {
	at   time.Time
	orig string
}

type askKey struct {
	addr netip.AddrPort
	t    string
}

// asks are the library's queries in flight and the nodes that answered
// one, for a pipeConn.
type asks struct {
	mu       sync.Mutex
	inFlight map[askKey]askEntry         // by the ID on the wire
	answered map[netip.AddrPort][20]byte // the ID each answered with
}

// sent picks the wire ID of the library's query orig to addr and notes
// it; ok is false when maxAsks queries are in flight (the query is not
// to be sent: its answer could not be given back).
func (a *asks) sent(addr netip.AddrPort, orig []byte, now time.Time) (wire []byte, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight == nil {
		a.inFlight = map[askKey]askEntry{}
	}
	if len(a.inFlight) >= maxAsks {
		for k, e := range a.inFlight {
			if now.Sub(e.at) > askTimeout {
				delete(a.inFlight, k)
			}
		}
		if len(a.inFlight) >= maxAsks {
			return nil, false
		}
	}
	// The runtime's generator (ChaCha8), as the walk's IDs.
	wire = make([]byte, 4)
	for {
		r := rand.Uint32()
		wire[0], wire[1], wire[2], wire[3] = libraryTIDTag, byte(r>>16), byte(r>>8), byte(r)
		if _, taken := a.inFlight[askKey{addr, string(wire)}]; !taken {
			break
		}
	}
	a.inFlight[askKey{addr, string(wire)}] = askEntry{at: now, orig: string(orig)}
	return wire, true
}

// reply takes a response or error from addr that is not the walk's, and
// returns the library's ID of the query it answers (ok false: none, and
// the library is not to see it). If it answers with a node ID, that node
// is confirmed.
func (a *asks) reply(from netip.AddrPort, m *ours.Msg) (orig []byte, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := askKey{from, string(m.T)}
	e, ok := a.inFlight[k]
	if !ok {
		return nil, false
	}
	delete(a.inFlight, k)
	orig = []byte(e.orig)
	if m.Y != ours.Response || len(m.ID) != 20 || len(a.answered) >= maxAnswered {
		return orig, true
	}
	if a.answered == nil {
		a.answered = map[netip.AddrPort][20]byte{}
	}
	a.answered[from] = [20]byte(m.ID)
	return orig, true
}

// confirmedOnly returns the nodes of nis that answered the library (a) or
// the walk (c, nil without one) under their listed ID, and forgets the
// library's answers from nodes no longer in nis once there are many.
func confirmedOnly(nis []krpc.NodeInfo, a *asks, c *crawler) []krpc.NodeInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.answered) > maxAnswered/2 {
		in := make(map[netip.AddrPort]bool, len(nis))
		for _, ni := range nis {
			in[nodeAddr(ni)] = true
		}
		for addr := range a.answered {
			if !in[addr] {
				delete(a.answered, addr)
			}
		}
	}
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	out := nis[:0:0]
	for _, ni := range nis {
		addr := nodeAddr(ni)
		if id, ok := a.answered[addr]; (ok && id == ni.ID) || (c != nil && c.confirmedLocked(addr, ni.ID)) {
			out = append(out, ni)
		}
	}
	return out
}

// nodeAddr is ni's address as the read loop sees senders (IPv4, unmapped).
func nodeAddr(ni krpc.NodeInfo) netip.AddrPort {
	ap := ni.Addr.UDP().AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// confirmedLocked reports whether the node at addr answered one of the
// walk's queries with ID id, and the walk has not given up on it since
// (c.mu held).
func (c *crawler) confirmedLocked(addr netip.AddrPort, id [20]byte) bool {
	rm := c.remotes[addr]
	return rm != nil && rm.answered && rm.state != stateDead && rm.id == id
}
