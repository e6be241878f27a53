package capture

import (
	"net/netip"
	"time"
)

// A node stores the peers announced to it and hands them out in the
// "values" of its get_peers replies. BEP 5: the queried node "should
// store the IP address of the querying node and the supplied port number
// under the infohash", and get_peers returns them. capture acknowledged
// every announce_peer and handed out none: a sink for the swarms whose
// hashes lie near its IDs, one of the K nodes they announce to. The store
// is bounded: the last maxStoredHashes hashes announced to a node, at
// most maxPeersPerHash peers of each (a new one replaces the oldest), each
// handed out for peerTTL after its last announce (clients announce again
// every 30 minutes or so). About 200 KB per node when full.
const (
	maxStoredHashes = 1024
	maxPeersPerHash = 8
	peerTTL         = 30 * time.Minute
)

type storedPeer struct {
	addr [6]byte // compact IPv4 address and port
	at   int64   // Unix ns of its last announce
}

type swarm struct {
	peers [maxPeersPerHash]storedPeer
	n     int
}

// peerStore is owned by a node's read loop.
type peerStore struct {
	m    map[[20]byte]*swarm
	ring [maxStoredHashes][20]byte // the hashes in order of first announce
	next int                       // announces of new hashes so far
}

// add stores peer ap under ih, announced at now.
func (s *peerStore) add(ih [20]byte, ap netip.AddrPort, now time.Time) {
	var addr [6]byte
	a4 := ap.Addr().Unmap().As4()
	copy(addr[:], a4[:])
	addr[4], addr[5] = byte(ap.Port()>>8), byte(ap.Port())
	at := now.UnixNano()
	if s.m == nil {
		s.m = make(map[[20]byte]*swarm)
	}
	sw := s.m[ih]
	if sw == nil {
		slot := s.next % maxStoredHashes
		if s.next >= maxStoredHashes {
			delete(s.m, s.ring[slot]) // the oldest hash makes way
		}
		s.ring[slot] = ih
		s.next++
		sw = &swarm{}
		s.m[ih] = sw
	}
	oldest := 0
	for i := range sw.n {
		if sw.peers[i].addr == addr {
			sw.peers[i].at = at
			return
		}
		if sw.peers[i].at < sw.peers[oldest].at {
			oldest = i
		}
	}
	if sw.n < maxPeersPerHash {
		oldest = sw.n
		sw.n++
	}
	sw.peers[oldest] = storedPeer{addr: addr, at: at}
}

// appendValues appends the compact addresses of ih's peers announced
// less than peerTTL before now.
func (s *peerStore) appendValues(dst []byte, ih []byte, now time.Time) []byte {
	sw := s.m[[20]byte(ih)]
	if sw == nil {
		return dst
	}
	t := now.UnixNano()
	for _, p := range sw.peers[:sw.n] {
		if t-p.at < int64(peerTTL) {
			dst = append(dst, p.addr[:]...)
		}
	}
	return dst
}
