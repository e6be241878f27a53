package testnet

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/anacrolix/dht/v2/krpc"
	peer_store "github.com/anacrolix/dht/v2/peer-store"
)

// peerStore is a map-based peer_store.Interface. The library's InMemory
// store returns garbage addresses in v2.23.0, so get_peers never finds
// peers with it.
type peerStore struct {
	mu    sync.Mutex
	peers map[peer_store.InfoHash]map[string]krpc.NodeAddr
	order [][20]byte // hashes in the order they were first stored
	// beforeAdd, set by tests only, runs at the start of every AddPeer
	// (which the library calls on a goroutine of its own): it may block,
	// as a loaded machine delays that goroutine.
	beforeAdd atomic.Pointer[func()]
	gets      atomic.Int64 // GetPeers calls, for tests
}

var _ peer_store.Interface = (*peerStore)(nil)

// AddPeer records that na has ih.
func (ps *peerStore) AddPeer(ih peer_store.InfoHash, na krpc.NodeAddr) {
	if f := ps.beforeAdd.Load(); f != nil {
		(*f)()
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.peers == nil {
		ps.peers = make(map[peer_store.InfoHash]map[string]krpc.NodeAddr)
	}
	m := ps.peers[ih]
	if m == nil {
		m = make(map[string]krpc.NodeAddr)
		ps.peers[ih] = m
		ps.order = append(ps.order, ih)
	}
	m[na.String()] = krpc.NodeAddr{IP: append([]byte(nil), na.IP...), Port: na.Port}
}

// drop forgets every peer stored for ih.
func (ps *peerStore) drop(ih [20]byte) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if _, ok := ps.peers[ih]; !ok {
		return
	}
	delete(ps.peers, ih)
	for i, h := range ps.order {
		if h == ih {
			ps.order = append(ps.order[:i], ps.order[i+1:]...)
			break
		}
	}
}

// GetPeers returns the peers stored for ih.
func (ps *peerStore) GetPeers(ih peer_store.InfoHash) []krpc.NodeAddr {
	ps.gets.Add(1)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]krpc.NodeAddr, 0, len(ps.peers[ih]))
	for _, na := range ps.peers[ih] {
		out = append(out, na)
	}
	return out
}

// sample returns up to max stored hashes chosen at random, and how many
// hashes are stored in all.
func (ps *peerStore) sample(rng *rand.Rand, max int) (samples [][20]byte, num int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	num = len(ps.order)
	if num <= max {
		return append([][20]byte(nil), ps.order...), num
	}
	for _, i := range rng.Perm(num)[:max] {
		samples = append(samples, ps.order[i])
	}
	return samples, num
}

// hashes returns every stored hash.
func (ps *peerStore) hashes() [][20]byte {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([][20]byte(nil), ps.order...)
}
