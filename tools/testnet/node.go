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
	slices.SortFunc(nodes, func(a, b krpc.NodeInfo) int {
		for i := range target {
			da, db := a.ID[i]^target[i], b.ID[i]^target[i]
			if da != db {
				return int(da) - int(db)
			}
		}
		return 0
	})
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
