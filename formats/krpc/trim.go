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

// ReplaceT returns a copy of packet b, which Parse decoded into m, with
// its transaction ID t instead of m.T; b is left as it is. capture puts
// IDs of its own on the queries of its DHT library, whose IDs come from
// one counter per process, and gives the library's back to the
// responses (pipeline/capture, pipeconn.go).
func ReplaceT(b []byte, m *Msg, t []byte) []byte {
	data := m.TAt + len(strconv.Itoa(len(m.T))) + 1
	end := data + len(m.T)
	out := make([]byte, 0, len(b)-len(m.T)+len(t)+4)
	out = append(out, b[:m.TAt]...)
	out = strconv.AppendInt(out, int64(len(t)), 10)
	out = append(out, ':')
	out = append(out, t...)
	return append(out, b[end:]...)
}
