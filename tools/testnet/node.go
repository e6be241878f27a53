package testnet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/krpc"
	alog "github.com/anacrolix/log"
	"github.com/anacrolix/torrent/bencode"
	"golang.org/x/time/rate"
)

// maxSamples is the most hashes one sample_infohashes reply carries
// (BEP 51: what fits in a UDP packet next to the nodes).
const maxSamples = 20

// node is one testnet DHT node: an anacrolix server with a working peer
// store and a BEP 51 responder.
type node struct {
	srv      *dht.Server
	conn     net.PacketConn
	store    *peerStore
	id       krpc.ID
	interval int64

	rngMu sync.Mutex
	rng   *rand.Rand

	table         atomic.Pointer[[]krpc.NodeInfo] // routing table snapshot
	sampleQueries atomic.Int64
	// dropGetPeers holds hashes whose next get_peers query the node drops
	// unanswered, as a node whose socket overflows does (tests).
	dropMu       sync.Mutex
	dropGetPeers map[[20]byte]bool
}

// newNode makes a node on conn; the server starts serving at once but only
// bootstraps when asked.
func newNode(conn net.PacketConn, id krpc.ID, seed uint64, interval time.Duration, starting func() ([]dht.Addr, error)) (*node, error) {
	n := &node{
		conn:     conn,
		store:    &peerStore{},
		id:       id,
		interval: int64(interval / time.Second),
		rng:      rand.New(rand.NewPCG(seed, 0x5eed)),
	}
	empty := []krpc.NodeInfo{}
	n.table.Store(&empty)
	cfg := dht.NewDefaultServerConfig()
	cfg.Conn = conn
	cfg.NodeId = id
	cfg.NoSecurity = true
	cfg.StartingNodes = starting
	cfg.PeerStore = n.store
	cfg.SendLimiter = rate.NewLimiter(rate.Inf, 0)
	cfg.OnQuery = n.onQuery
	cfg.Logger = alog.Default.FilterLevel(alog.Disabled)
	cfg.QueryResendDelay = func() time.Duration { return 500 * time.Millisecond }
	srv, err := dht.NewServer(cfg)
	if err != nil {
		return nil, fmt.Errorf("testnet: dht node on %s: %w", conn.LocalAddr(), err)
	}
	n.srv = srv
	return n, nil
}

// addr is the node's UDP address.
func (n *node) addr() *net.UDPAddr { return n.conn.LocalAddr().(*net.UDPAddr) }

// refreshTable keeps the routing-table snapshot that the BEP 51 responder
// uses fresh. It runs outside the server lock.
func (n *node) refreshTable(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		nodes := n.srv.Nodes()
		n.table.Store(&nodes)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// closest returns up to k nodes of the snapshot nearest to target.
func (n *node) closest(target krpc.ID, k int) krpc.CompactIPv4NodeInfo {
	nodes := slices.Clone(*n.table.Load())
	slices.SortFunc(nodes, func(a, b krpc.NodeInfo) int { return xorCompare(target, a.ID, b.ID) })
	var out krpc.CompactIPv4NodeInfo
	for _, ni := range nodes {
		if len(out) == k {
			break
		}
		if ni.Addr.IP.To4() != nil {
			out = append(out, ni)
		}
	}
	return out
}

// sampleReply is a BEP 51 response. It is encoded by hand because
// krpc.CompactInfohashes panics when marshalled in v2.23.0.
type sampleReply struct {
	T string       `bencode:"t"`
	Y string       `bencode:"y"`
	R sampleReturn `bencode:"r"`
}

type sampleReturn struct {
	ID       krpc.ID                  `bencode:"id"`
	Interval int64                    `bencode:"interval"`
	Nodes    krpc.CompactIPv4NodeInfo `bencode:"nodes,omitempty"`
	Num      int64                    `bencode:"num"`
	Samples  []byte                   `bencode:"samples"`
}

// onQuery answers sample_infohashes and lets the library handle the rest.
// It runs under the server's lock: it must not call server methods.
func (n *node) onQuery(m *krpc.Msg, src net.Addr) bool {
	if m.Q == "get_peers" && m.A != nil && n.dropOnce(m.A.InfoHash) {
		return false
	}
	if m.Q != "sample_infohashes" || m.A == nil {
		return true
	}
	n.sampleQueries.Add(1)
	n.rngMu.Lock()
	samples, num := n.store.sample(n.rng, maxSamples)
	n.rngMu.Unlock()
	flat := make([]byte, 0, 20*len(samples))
	for _, s := range samples {
		flat = append(flat, s[:]...)
	}
	b, err := bencode.Marshal(sampleReply{T: m.T, Y: "r", R: sampleReturn{
		ID:       n.id,
		Interval: n.interval,
		Nodes:    n.closest(m.A.Target, 8),
		Num:      int64(num),
		Samples:  flat,
	}})
	if err == nil {
		_, _ = n.conn.WriteTo(b, src)
	}
	return false
}

// dropNextGetPeers makes the node drop the next get_peers query for ih.
func (n *node) dropNextGetPeers(ih [20]byte) {
	n.dropMu.Lock()
	defer n.dropMu.Unlock()
	if n.dropGetPeers == nil {
		n.dropGetPeers = map[[20]byte]bool{}
	}
	n.dropGetPeers[ih] = true
}

// dropOnce reports whether a get_peers query for ih is to be dropped,
// and forgets the hash if so.
func (n *node) dropOnce(ih [20]byte) bool {
	n.dropMu.Lock()
	defer n.dropMu.Unlock()
	if !n.dropGetPeers[ih] {
		return false
	}
	delete(n.dropGetPeers, ih)
	return true
}

// xorCompare orders the IDs a and b by their XOR distance to target.
func xorCompare(target [20]byte, a, b krpc.ID) int {
	for i := range target {
		da, db := a[i]^target[i], b[i]^target[i]
		if da != db {
			return int(da) - int(db)
		}
	}
	return 0
}

// stores reports whether the node stores a peer with port for ih.
func (n *node) stores(ih [20]byte, port int) bool {
	for _, p := range n.store.GetPeers(ih) {
		if p.Port == port {
			return true
		}
	}
	return false
}

// storeOn makes the node to store a peer with port for ih, announcing it
// from n with the two KRPC queries a client sends: get_peers for a token,
// then announce_peer. Each query is sent up to storeTries times. The
// library answers an announce_peer it takes and adds to the store on a
// goroutine of its own, so once answered the store is polled until it
// holds the peer: a loaded machine delays that goroutine, and 100 polls
// of 2 ms each, then another announce, were windows it could outlast.
// storeWait only bounds a store that never comes.
func (n *node) storeOn(ctx context.Context, to *node, ih [20]byte, port int) error {
	dst := dht.NewAddr(to.addr())
	var last error
	for range storeTries {
		if to.stores(ih, port) {
			return nil
		}
		res := n.srv.Query(ctx, dst, "get_peers", dht.QueryInput{
			MsgArgs: krpc.MsgArgs{InfoHash: ih}, NumTries: storeTries})
		if err := res.ToError(); err != nil {
			last = fmt.Errorf("get_peers to %s: %w", dst, err)
			continue
		}
		if res.Reply.R == nil || res.Reply.R.Token == nil {
			last = fmt.Errorf("get_peers to %s: no token", dst)
			continue
		}
		res = n.srv.Query(ctx, dst, "announce_peer", dht.QueryInput{
			MsgArgs: krpc.MsgArgs{InfoHash: ih, Port: &port, Token: *res.Reply.R.Token}, NumTries: storeTries})
		if err := res.ToError(); err != nil {
			last = fmt.Errorf("announce_peer to %s: %w", dst, err)
			continue
		}
		for end := time.Now().Add(storeWait); time.Now().Before(end) && ctx.Err() == nil; {
			if to.stores(ih, port) {
				return nil
			}
			time.Sleep(2 * time.Millisecond)
		}
		last = ErrNotStored
	}
	if to.stores(ih, port) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return last
}

// storeTries bounds the attempts storeOn makes, and the sends of each of
// its queries; storeWait how long it waits for an answered announce to be
// stored.
const (
	storeTries = 5
	storeWait  = time.Minute
)
