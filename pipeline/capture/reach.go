package capture

import (
	"net/netip"

	"github.com/anacrolix/dht/v2/krpc"

	"github.com/infohash/infohash/internal/reach"
)

// Which addresses capture sends queries to is package reach's rule (in
// internal/reach, shared with fetch): capture queries (through its
// crawler and its library's traversals) only public addresses, and the
// loopback or private ranges only when the run was pointed into one: a
// bootstrap address in it, or, for loopback, a socket that listens there
// and can reach nothing else. Replies to whoever queried us are not
// affected.

// inReach keeps the routing-table entries in reach of r, for the
// snapshot the read loop answers find_node and get_peers from: a node
// hands out only addresses it would query itself (a LAN neighbour that
// queried it is not advertised to the Internet).
func inReach(r reach.Rule, nis []krpc.NodeInfo) []krpc.NodeInfo {
	out := nis[:0:0]
	for _, ni := range nis {
		if ap := ni.Addr.UDP().AddrPort(); r.OK(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())) {
			out = append(out, ni)
		}
	}
	return out
}
