package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/krpc"
)

// Config sizes a testnet. Zero fields take the defaults of DefaultConfig.
type Config struct {
	Nodes    int    // DHT nodes
	Seeders  int    // torrent clients seeding the announced torrents
	Torrents int    // torrents seeded and announced
	Searched int    // hashes that searchers look up but nobody has
	Dead     int    // hashes announced once whose peer then went away
	Seed     uint64 // makes node IDs, torrents and hashes reproducible

	// Interval is the BEP 51 interval the nodes report (whole seconds).
	Interval time.Duration
	// SearchEvery is how often the searchers look up the searched hashes
	// (and a few announced ones); negative disables searching.
	SearchEvery time.Duration
	// Reannounce is how often seeders announce again; negative: never.
	Reannounce time.Duration
	// DeadFlap, when above 0, makes the dead hashes come and go: every
	// DeadFlap one of them in turn is dropped from every node's store
	// (sample_infohashes stops returning it) or, if dropped, announced
	// again with its gone peer. 0: stored once, for good.
	DeadFlap time.Duration
	// DataDir holds the seeders' client state; default a temporary
	// directory removed by Close.
	DataDir string
}

// DefaultConfig returns a small net that starts in well under a second.
func DefaultConfig() Config {
	return Config{
		Nodes: 16, Seeders: 2, Torrents: 12, Searched: 6, Dead: 3, Seed: 1,
		Interval: time.Second, SearchEvery: time.Second, Reannounce: 30 * time.Second,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Nodes <= 0 {
		c.Nodes = d.Nodes
	}
	if c.Seeders <= 0 {
		c.Seeders = d.Seeders
	}
	if c.Torrents < 0 {
		c.Torrents = 0
	} else if c.Torrents == 0 {
		c.Torrents = d.Torrents
	}
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.SearchEvery == 0 {
		c.SearchEvery = d.SearchEvery
	}
	if c.Reannounce == 0 {
		c.Reannounce = d.Reannounce
	}
	return c
}

// Net is a running testnet. Its methods are safe for concurrent use.
type Net struct {
	cfg      Config
	nodes    []*node
	seeders  []*seeder
	torrents []Torrent // announced ones first, then dead ones
	searched [][20]byte
	tmpDir   string
	deadPort io.Closer // the dead hashes' peer port, held (see holdPort)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	extra   map[string][]TruthEntry
	clients []*dht.Server // outside nodes (Client), closed with the net
}

// Start builds the testnet and returns once every node has bootstrapped
// and every torrent has been announced. It stops when ctx ends or on
// Close.
func Start(ctx context.Context, cfg Config) (_ *Net, err error) {
	cfg = cfg.withDefaults()
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	n := &Net{cfg: cfg, extra: map[string][]TruthEntry{}}
	n.ctx, n.cancel = context.WithCancel(ctx)
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if err := n.startNodes(rng); err != nil {
		return nil, err
	}
	if err := n.startSeeders(rng); err != nil {
		return nil, err
	}
	for range cfg.Searched {
		var h [20]byte
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		n.searched = append(n.searched, h)
	}
	if cfg.SearchEvery > 0 {
		n.wg.Add(1)
		go n.search(cfg.SearchEvery)
	}
	if cfg.Reannounce > 0 {
		n.wg.Add(1)
		go n.reannounce(cfg.Reannounce)
	}
	if cfg.DeadFlap > 0 && cfg.Dead > 0 {
		n.wg.Go(func() { n.flapDead(cfg.DeadFlap) })
	}
	return n, nil
}

// startNodes makes every socket first, then servers whose starting nodes
// are all the others, then bootstraps them together: that leaves each
// routing table well filled.
func (n *Net) startNodes(rng *rand.Rand) error {
	conns := make([]net.PacketConn, n.cfg.Nodes)
	addrs := make([]dht.Addr, n.cfg.Nodes)
	for i := range conns {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return fmt.Errorf("testnet: listening: %w", err)
		}
		if uc, ok := c.(*net.UDPConn); ok {
			// Many concurrent lookups (fetch at concurrency 1000) arrive in
			// bursts that overflow the default ~200 KiB buffer.
			_ = uc.SetReadBuffer(4 << 20)
		}
		conns[i] = c
		addrs[i] = dht.NewAddr(c.LocalAddr())
	}
	starting := func() ([]dht.Addr, error) { return addrs, nil }
	for i, c := range conns {
		var id krpc.ID
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		nd, err := newNode(c, id, rng.Uint64(), n.cfg.Interval, starting)
		if err != nil {
			for _, c := range conns[i:] {
				c.Close()
			}
			return err
		}
		n.nodes = append(n.nodes, nd)
	}
	var wg sync.WaitGroup
	for _, nd := range n.nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(n.ctx, 10*time.Second)
			defer cancel()
			_, _ = nd.srv.BootstrapContext(ctx)
		})
	}
	wg.Wait()
	if err := n.ctx.Err(); err != nil {
		return fmt.Errorf("testnet: bootstrapping: %w", err)
	}
	for _, nd := range n.nodes {
		n.wg.Go(func() { nd.refreshTable(n.ctx, 250*time.Millisecond) })
	}
	return nil
}

// BootstrapAddrs returns the DHT nodes' addresses, "127.0.0.1:port".
func (n *Net) BootstrapAddrs() []string {
	out := make([]string, len(n.nodes))
	for i, nd := range n.nodes {
		out[i] = nd.addr().String()
	}
	return out
}

// StartingNodes returns the DHT nodes' addresses as a dht.ServerConfig's
// StartingNodes wants them: an outside node set so bootstraps from the net.
func (n *Net) StartingNodes() ([]dht.Addr, error) {
	out := make([]dht.Addr, len(n.nodes))
	for i, nd := range n.nodes {
		out[i] = dht.NewAddr(nd.addr())
	}
	return out, nil
}

// Torrents returns the generated torrents: the announced ones, then the
// dead ones (Torrent.Dead).
func (n *Net) Torrents() []Torrent {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Torrent, len(n.torrents))
	copy(out, n.torrents)
	return out
}

// Searched returns the hashes the searchers look up that nobody has.
func (n *Net) Searched() [][20]byte { return append([][20]byte(nil), n.searched...) }

// SampleQueries is how many sample_infohashes queries the nodes answered.
func (n *Net) SampleQueries() int64 {
	var s int64
	for _, nd := range n.nodes {
		s += nd.sampleQueries.Load()
	}
	return s
}

// StoredHashes returns every hash some node stores a peer for: exactly
// what sample_infohashes can return.
func (n *Net) StoredHashes() map[[20]byte]bool {
	m := map[[20]byte]bool{}
	for _, nd := range n.nodes {
		for _, h := range nd.store.hashes() {
			m[h] = true
		}
	}
	return m
}

// ErrNotStored is returned by Announce when a node nearest the hash did
// not take the announce.
var ErrNotStored = errors.New("a node nearest the hash did not store the announce")

// Announce makes get_peers(ih) find the peer at addr: a testnet node runs
// a get_peers traversal and sends announce_peer with addr's port to the
// closest nodes it heard from. A lookup ends once the nodes nearest the
// hash have answered, so Announce then makes sure the storedWanted
// nearest nodes of the whole net store the peer, announcing to any that
// the traversal missed (a query dropped or answered late on a loaded
// machine) directly over KRPC. All testnet traffic is on 127.0.0.1, so
// only the port of addr counts.
func (n *Net) Announce(ctx context.Context, ih [20]byte, addr *net.TCPAddr) error {
	if addr == nil || addr.Port <= 0 {
		return fmt.Errorf("testnet: announce %x: need a TCP port", ih)
	}
	from := n.nodes[int(ih[0])%len(n.nodes)]
	a, err := from.srv.AnnounceTraversal(ih, dht.AnnouncePeer(dht.AnnouncePeerOpts{Port: addr.Port}))
	if err != nil {
		return fmt.Errorf("testnet: announce %x: %w", ih, err)
	}
	for range a.Peers {
	}
	a.Close()
	for _, nd := range n.closestNodes(ih, storedWanted) {
		via := from
		if via == nd {
			// A node does not query itself: another one announces to it.
			via = n.nodes[(slices.Index(n.nodes, nd)+1)%len(n.nodes)]
		}
		if err := via.storeOn(ctx, nd, ih, addr.Port); err != nil {
			return fmt.Errorf("testnet: announce %x to port %d: %w", ih, addr.Port, err)
		}
	}
	return nil
}

// storedWanted is how many of the nodes nearest a hash Announce makes
// store its peer.
const storedWanted = 3

// closestNodes returns the k testnet nodes nearest ih, nearest first.
func (n *Net) closestNodes(ih [20]byte, k int) []*node {
	nodes := slices.Clone(n.nodes)
	slices.SortFunc(nodes, func(a, b *node) int { return xorCompare(ih, a.id, b.id) })
	return nodes[:min(k, len(nodes))]
}

// AddTruth records an extra ground-truth entry of the given kind (for
// example "no_metadata_peer"); it appears in Truth().Extra.
func (n *Net) AddTruth(kind string, e TruthEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.extra[kind] = append(n.extra[kind], e)
}

// Close stops searchers, seeders, clients and nodes, and removes
// temporary files. It is safe to call more than once.
func (n *Net) Close() error {
	n.cancel()
	n.wg.Wait()
	n.mu.Lock()
	clients := n.clients
	n.clients = nil
	n.mu.Unlock()
	for _, s := range clients {
		s.Close()
	}
	for _, s := range n.seeders {
		s.close()
	}
	n.seeders = nil
	for _, nd := range n.nodes {
		nd.srv.Close()
	}
	n.nodes = nil
	if n.deadPort != nil {
		n.deadPort.Close()
		n.deadPort = nil
	}
	if n.tmpDir != "" {
		os.RemoveAll(n.tmpDir)
		n.tmpDir = ""
	}
	return nil
}
