// Package obsgen generates synthetic DHT observations for tests and
// benchmarks: deterministic for a seed, Zipf-like repeats over a known
// number of distinct infohashes, and exact ground truth to compare a
// deduplicated state against.
//
// Hashes are identified by rank: rank r's 20 bytes come from a PRNG keyed
// by (seed, r), so nothing needs to remember them. Rank 0 is the most
// popular. A file introduces ranks [Known, Known+Distinct) — each appears
// at least once, on a fixed schedule spread evenly over the rows — and
// every other row repeats a rank already seen (in an earlier file, below
// Known, or earlier in this one), drawn from a Zipf distribution.
package obsgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Config describes one generated file. The zero value is not valid; start
// from DefaultConfig.
type Config struct {
	Seed     uint64 // selects the hash universe and the row randomness
	Rows     int64  // observations to generate
	Distinct int64  // new hashes this file introduces (≤ Rows); 0 = Rows/5
	// Known is how many ranks earlier files introduced (with the same
	// seed): repeats may hit them, and this file's new ranks start there.
	Known int64
	// Stream tells apart files with the same seed and Known (row
	// randomness only).
	Stream uint64
	// ZipfS (> 1) and ZipfV (≥ 1) shape the repeats: rank k is drawn with
	// weight (ZipfV+k)^-ZipfS.
	ZipfS, ZipfV float64
	// V2PerMille of the hashes are BitTorrent v2 (hash_type 2, the full
	// 32 bytes in info_hash_v2, info_hash their first 20).
	V2PerMille int
	Start      time.Time     // observed_at of the first row (before jitter)
	Window     time.Duration // observed_at spreads evenly over [Start, Start+Window)
	Jitter     time.Duration // each observed_at moves by up to ±Jitter
	RunID      string        // run_id column; "" = "obsgen-<seed>"
}

// DefaultConfig is 1M rows, 20% distinct, 1% v2, over one day of 2025.
func DefaultConfig() Config {
	return Config{
		Seed:       1,
		Rows:       1_000_000,
		ZipfS:      1.1,
		ZipfV:      10,
		V2PerMille: 10,
		Start:      time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Window:     24 * time.Hour,
		Jitter:     2 * time.Second,
	}
}

// Validate reports whether c describes a file obsgen can generate.
func (c Config) Validate() error { return c.normalize() }

func (c *Config) normalize() error {
	if c.Distinct == 0 {
		c.Distinct = c.Rows / 5
		if c.Distinct == 0 && c.Rows > 0 {
			c.Distinct = 1
		}
	}
	if c.RunID == "" {
		c.RunID = fmt.Sprintf("obsgen-%d", c.Seed)
	}
	switch {
	case c.Rows <= 0:
		return errors.New("obsgen: rows must be positive")
	case c.Distinct < 0 || c.Distinct > c.Rows:
		return fmt.Errorf("obsgen: distinct %d must be between 1 and rows %d", c.Distinct, c.Rows)
	case c.Known < 0:
		return errors.New("obsgen: known must not be negative")
	case c.ZipfS <= 1 || c.ZipfV < 1:
		return fmt.Errorf("obsgen: need zipf s > 1 and v ≥ 1, got s=%g v=%g", c.ZipfS, c.ZipfV)
	case c.V2PerMille < 0 || c.V2PerMille > 1000:
		return fmt.Errorf("obsgen: v2 per mille %d out of 0..1000", c.V2PerMille)
	case c.Window < 0 || c.Jitter < 0:
		return errors.New("obsgen: window and jitter must not be negative")
	}
	return nil
}

// Generator produces the rows of one Config in order.
type Generator struct {
	cfg   Config
	rng   *rand.Rand
	zipf  *rand.Zipf
	nodes []node
	row   int64 // rows produced so far
	intro int64 // new ranks introduced so far
	seen  bitset
	truth Truth
	start int64 // ms
	step  float64
	jit   int64 // ms
}

type node struct {
	addr string
	id   []byte
}

// New validates cfg and returns a generator positioned at the first row.
func New(cfg Config) (*Generator, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Known)*0x9e3779b97f4a7c15^cfg.Stream))
	total := cfg.Known + cfg.Distinct
	g := &Generator{
		cfg:   cfg,
		rng:   rng,
		zipf:  rand.NewZipf(rng, cfg.ZipfS, cfg.ZipfV, uint64(total-1)),
		nodes: makeNodes(rng, 4096),
		seen:  newBitset(cfg.Known),
		start: cfg.Start.UnixMilli(),
		step:  float64(cfg.Window.Milliseconds()) / float64(cfg.Rows),
		jit:   cfg.Jitter.Milliseconds(),
	}
	g.truth = Truth{Seed: cfg.Seed, Rows: cfg.Rows, New: cfg.Distinct, Known: cfg.Known,
		After: total, Sources: map[string]int64{}}
	h, _, _ := HashOf(cfg.Seed, 0, cfg.V2PerMille)
	g.truth.TopHash = schema.Hex(h)
	return g, nil
}

func makeNodes(rng *rand.Rand, n int) []node {
	nodes := make([]node, n)
	for i := range nodes {
		id := make([]byte, 20)
		for j := 0; j < 20; j += 4 {
			v := rng.Uint32()
			id[j], id[j+1], id[j+2], id[j+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
		nodes[i] = node{
			addr: fmt.Sprintf("127.0.0.%d:%d", 1+rng.IntN(254), 1024+rng.IntN(64512)),
			id:   id,
		}
	}
	return nodes
}

// Remaining reports how many rows are still to come.
func (g *Generator) Remaining() int64 { return g.cfg.Rows - g.row }

// Next fills buf with the next rows and returns how many; 0 at the end.
// Rows share the node ID slices of a small pool: do not modify them.
func (g *Generator) Next(buf []schema.Observation) int {
	n := int(min(int64(len(buf)), g.Remaining()))
	for i := range n {
		g.fill(&buf[i])
	}
	return n
}

func (g *Generator) fill(o *schema.Observation) {
	c := &g.cfg
	i := g.row
	g.row++
	var rank int64
	// Row i introduces a new rank when ceil((i+1)·D/N) > ceil(i·D/N): the
	// first row always does, and exactly D rows do in all.
	if ceilDiv((i+1)*c.Distinct, c.Rows) > ceilDiv(i*c.Distinct, c.Rows) {
		rank = c.Known + g.intro
		g.intro++
		g.truth.Distinct++
		if g.isV2(rank) {
			g.truth.V2Distinct++
		}
	} else {
		rank = g.repeat(c.Known + g.intro)
		if rank < c.Known && !g.seen.testAndSet(rank) {
			g.truth.Distinct++
			if g.isV2(rank) {
				g.truth.V2Distinct++
			}
		}
	}
	if rank == 0 {
		g.truth.TopCount++
	}
	h, full, v2 := HashOf(c.Seed, rank, c.V2PerMille)
	o.InfoHash = h
	o.InfoHashV2 = nil
	o.HashType = schema.HashV1
	if v2 {
		o.HashType = schema.HashV2
		o.InfoHashV2 = append([]byte(nil), full[:]...)
	}
	t := g.start + int64(float64(i)*g.step)
	if g.jit > 0 {
		t += g.rng.Int64N(2*g.jit+1) - g.jit
	}
	o.ObservedAt = t
	g.truth.observe(t)
	nd := &g.nodes[g.rng.IntN(len(g.nodes))]
	o.NodeAddr, o.NodeID, o.PeerPort = nd.addr, nd.id, 0
	switch p := g.rng.IntN(100); {
	case p < 70:
		o.Source = schema.SourceGetPeers
	case p < 90:
		o.Source = schema.SourceAnnouncePeer
		o.PeerPort = int32(1024 + g.rng.IntN(64512))
	default:
		o.Source = schema.SourceSampleInfohashes
	}
	g.truth.Sources[o.Source]++
	o.RunID = c.RunID
}

// repeat draws a rank below k from the Zipf distribution restricted to
// [0, k), by rejection; after a few misses it folds instead, which only
// happens while k is tiny.
func (g *Generator) repeat(k int64) int64 {
	for range 16 {
		if r := int64(g.zipf.Uint64()); r < k {
			return r
		}
	}
	return int64(g.zipf.Uint64()) % k
}

func (g *Generator) isV2(rank int64) bool {
	_, _, v2 := HashOf(g.cfg.Seed, rank, g.cfg.V2PerMille)
	return v2
}

// Truth reports what the rows produced so far contain; after the last row
// it is the ground truth of the whole file.
func (g *Generator) Truth() Truth {
	t := g.truth
	t.Sources = make(map[string]int64, len(g.truth.Sources))
	for k, v := range g.truth.Sources {
		t.Sources[k] = v
	}
	return t
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// HashOf returns rank's infohash under seed: the 32 bytes of its hash, of
// which info_hash is the first 20, and whether it is a v2 hash (about
// v2PerMille in 1000 ranks are).
func HashOf(seed uint64, rank int64, v2PerMille int) (h schema.Hash, full [32]byte, v2 bool) {
	s := splitmix(seed^0x6a09e667f3bcc909) + uint64(rank)*0x9e3779b97f4a7c15
	for i := 0; i < 32; i += 8 {
		s = splitmix(s)
		for j := range 8 {
			full[i+j] = byte(s >> (8 * j))
		}
	}
	copy(h[:], full[:20])
	return h, full, int(splitmix(s)%1000) < v2PerMille
}

// splitmix is the SplitMix64 finaliser: a bijective mix of 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

type bitset []uint64

func newBitset(n int64) bitset { return make(bitset, (n+63)/64) }

func (b bitset) testAndSet(i int64) bool {
	w, m := i/64, uint64(1)<<(i%64)
	old := b[w]&m != 0
	b[w] |= m
	return old
}
