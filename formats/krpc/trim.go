package krpc

import "strconv"

// TrimNodes cuts r.nodes of packet b, which Parse decoded into m, to its
// first max contacts, and returns the packet: b itself, made shorter (the
// bytes after the nodes move up), with m.Nodes set to the nodes kept. It
// returns b as it is when r.nodes holds max contacts or fewer. m's other
// byte slices that alias b past the nodes are stale afterwards.
//
// BEP 5 has a node list the K = 8 nodes closest to the target, yet one
// datagram can hold 2,500, at addresses of the sender's choosing, and the
// anacrolix traversals (bootstrap, bucket refresh) query every one closer
// than those that answered: the stages trim what they hand the library.
func TrimNodes(b []byte, m *Msg, max int) []byte {
	keep := max * 26
	if m.NodesAt <= 0 || len(m.Nodes) <= keep {
		return b
	}
	// b[m.NodesAt:] is "<length>:<nodes>": Parse read it there.
	data := m.NodesAt + len(strconv.Itoa(len(m.Nodes))) + 1
	end := data + len(m.Nodes)
	w := m.NodesAt + copy(b[m.NodesAt:], strconv.Itoa(keep))
	b[w] = ':'
	w++
	copy(b[w:], b[data:data+keep]) // moves up: copy allows the overlap
	m.Nodes = b[w : w+keep]
	w += keep
	w += copy(b[w:], b[end:])
	return b[:w]
}
