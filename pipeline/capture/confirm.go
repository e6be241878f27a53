package capture

import (
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
// forgotten after askTimeout, and the nodes that answered one, kept for
// as long as they stay in its table.
const (
	maxAsks     = 4096
	askTimeout  = time.Minute
	maxAnswered = 1 << 14
)

type askKey struct {
	addr netip.AddrPort
	t    string
}

// asks are the library's queries in flight and the nodes that answered
// one, for a pipeConn.
type asks struct {
	mu       sync.Mutex
	inFlight map[askKey]time.Time
	answered map[netip.AddrPort][20]byte // the ID each answered with
}

// sent notes the library's query t to addr.
func (a *asks) sent(addr netip.AddrPort, t []byte, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight == nil {
		a.inFlight = map[askKey]time.Time{}
	}
	if len(a.inFlight) >= maxAsks {
		for k, at := range a.inFlight {
			if now.Sub(at) > askTimeout {
				delete(a.inFlight, k)
			}
		}
		if len(a.inFlight) >= maxAsks {
			return // its answer will not confirm the node: only a loss for the replies
		}
	}
	a.inFlight[askKey{addr, string(t)}] = now
}

// reply takes a response or error from addr that is not the walk's: if it
// answers a query of the library's with a node ID, that node is
// confirmed.
func (a *asks) reply(from netip.AddrPort, m *ours.Msg) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := askKey{from, string(m.T)}
	if _, ok := a.inFlight[k]; !ok {
		return
	}
	delete(a.inFlight, k)
	if m.Y != ours.Response || len(m.ID) != 20 || len(a.answered) >= maxAnswered {
		return
	}
	if a.answered == nil {
		a.answered = map[netip.AddrPort][20]byte{}
	}
	a.answered[from] = [20]byte(m.ID)
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
