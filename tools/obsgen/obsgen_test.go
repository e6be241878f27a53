package obsgen

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

func small(mod func(*Config)) Config {
	c := DefaultConfig()
	c.Rows = 20_000
	if mod != nil {
		mod(&c)
	}
	return c
}

func generate(t *testing.T, c Config) ([]schema.Observation, Truth) {
	t.Helper()
	g, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	var all []schema.Observation
	buf := make([]schema.Observation, 777) // not a divisor of Rows
	for n := g.Next(buf); n > 0; n = g.Next(buf) {
		for _, o := range buf[:n] {
			o.InfoHashV2 = slices.Clone(o.InfoHashV2)
			all = append(all, o)
		}
	}
	return all, g.Truth()
}

// bruteTruth recomputes the ground truth from the rows themselves.
func bruteTruth(rows []schema.Observation, top schema.Hash) (distinct, v2, topCount, minT, maxT int64, sources map[string]int64) {
	seen := map[schema.Hash]bool{}
	sources = map[string]int64{}
	minT, maxT = math.MaxInt64, math.MinInt64
	for _, o := range rows {
		if !seen[o.InfoHash] {
			seen[o.InfoHash] = true
			distinct++
			if o.HashType == schema.HashV2 {
				v2++
			}
		}
		if o.InfoHash == top {
			topCount++
		}
		minT, maxT = min(minT, o.ObservedAt), max(maxT, o.ObservedAt)
		sources[o.Source]++
	}
	return
}

func TestTruthMatchesRows(t *testing.T) {
	tests := map[string]Config{
		"default 20%":   small(nil),
		"all distinct":  small(func(c *Config) { c.Distinct = c.Rows }),
		"one hash":      small(func(c *Config) { c.Distinct = 1 }),
		"over a state":  small(func(c *Config) { c.Known = 50_000; c.Distinct = 1_000 }),
		"many v2":       small(func(c *Config) { c.V2PerMille = 500 }),
		"steep zipf":    small(func(c *Config) { c.ZipfS, c.ZipfV = 2, 1 }),
		"no jitter":     small(func(c *Config) { c.Jitter = 0 }),
		"other seed":    small(func(c *Config) { c.Seed = 99 }),
		"other stream":  small(func(c *Config) { c.Stream = 3 }),
		"rows not mult": small(func(c *Config) { c.Rows = 12_345; c.Distinct = 4_321 }),
	}
	for name, c := range tests {
		t.Run(name, func(t *testing.T) {
			rows, tr := generate(t, c)
			if int64(len(rows)) != c.Rows || tr.Rows != c.Rows {
				t.Fatalf("rows: got %d, truth %d, want %d", len(rows), tr.Rows, c.Rows)
			}
			top, _, _ := HashOf(c.Seed, 0, c.V2PerMille)
			if tr.TopHash != schema.Hex(top) {
				t.Errorf("top hash %s, want %s", tr.TopHash, schema.Hex(top))
			}
			d, v2, tc, lo, hi, src := bruteTruth(rows, top)
			if d != tr.Distinct || v2 != tr.V2Distinct || tc != tr.TopCount {
				t.Errorf("distinct/v2/top: truth %d/%d/%d, rows %d/%d/%d",
					tr.Distinct, tr.V2Distinct, tr.TopCount, d, v2, tc)
			}
			if lo != tr.MinObservedAt || hi != tr.MaxObservedAt {
				t.Errorf("observed_at bounds: truth %d..%d, rows %d..%d", tr.MinObservedAt, tr.MaxObservedAt, lo, hi)
			}
			if !mapsEqual(src, tr.Sources) {
				t.Errorf("sources: truth %v, rows %v", tr.Sources, src)
			}
			wantNew := c.Distinct
			if wantNew == 0 {
				wantNew = c.Rows / 5
			}
			if tr.New != wantNew || tr.After != c.Known+wantNew {
				t.Errorf("new/after: %d/%d, want %d/%d", tr.New, tr.After, wantNew, c.Known+wantNew)
			}
			if c.Known == 0 && tr.Distinct != wantNew {
				t.Errorf("distinct %d, want exactly %d", tr.Distinct, wantNew)
			}
		})
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDeterministic(t *testing.T) {
	c := small(nil)
	a, ta := generate(t, c)
	b, tb := generate(t, c)
	if !slices.EqualFunc(a, b, obsEqual) || ta.Distinct != tb.Distinct {
		t.Fatal("two runs with the same config differ")
	}
	c.Seed++
	d, _ := generate(t, c)
	if a[0].InfoHash == d[0].InfoHash {
		t.Fatal("another seed gave the same first hash")
	}
}

func obsEqual(a, b schema.Observation) bool {
	return a.InfoHash == b.InfoHash && string(a.InfoHashV2) == string(b.InfoHashV2) &&
		a.HashType == b.HashType && a.ObservedAt == b.ObservedAt && a.Source == b.Source &&
		a.NodeAddr == b.NodeAddr && string(a.NodeID) == string(b.NodeID) &&
		a.PeerPort == b.PeerPort && a.RunID == b.RunID
}

// A batch generated over a state repeats mostly hashes the state has:
// the same seed gives the same hash universe.
func TestBatchOverlapsState(t *testing.T) {
	base, _ := generate(t, small(func(c *Config) { c.Rows, c.Distinct = 5_000, 5_000 }))
	batch, tr := generate(t, small(func(c *Config) { c.Rows, c.Distinct, c.Known = 2_000, 200, 5_000 }))
	inBase := map[schema.Hash]bool{}
	for _, o := range base {
		inBase[o.InfoHash] = true
	}
	newSeen := map[schema.Hash]bool{}
	for _, o := range batch {
		if !inBase[o.InfoHash] {
			newSeen[o.InfoHash] = true
		}
	}
	if int64(len(newSeen)) != tr.New {
		t.Fatalf("batch has %d hashes outside the base, want %d", len(newSeen), tr.New)
	}
}

func TestRowShape(t *testing.T) {
	c := small(func(c *Config) { c.V2PerMille = 100 })
	rows, _ := generate(t, c)
	end := c.Start.Add(c.Window + c.Jitter).UnixMilli()
	var v2 int
	for i, o := range rows {
		if o.HashType == schema.HashV2 {
			v2++
			if len(o.InfoHashV2) != 32 || [20]byte(o.InfoHashV2[:20]) != o.InfoHash {
				t.Fatalf("row %d: v2 hash %x does not extend info_hash %x", i, o.InfoHashV2, o.InfoHash)
			}
		} else if o.HashType != schema.HashV1 || o.InfoHashV2 != nil {
			t.Fatalf("row %d: hash_type %d with v2 %x", i, o.HashType, o.InfoHashV2)
		}
		if o.ObservedAt < c.Start.Add(-c.Jitter).UnixMilli() || o.ObservedAt > end {
			t.Fatalf("row %d: observed_at %v outside the window", i, time.UnixMilli(o.ObservedAt))
		}
		if (o.Source == schema.SourceAnnouncePeer) != (o.PeerPort != 0) {
			t.Fatalf("row %d: source %s with peer_port %d", i, o.Source, o.PeerPort)
		}
		if len(o.NodeID) != 20 || len(o.NodeAddr) < len("127.0.0.1:1") || o.NodeAddr[:8] != "127.0.0." {
			t.Fatalf("row %d: node %q %x", i, o.NodeAddr, o.NodeID)
		}
	}
	if v2 == 0 || v2 > len(rows)/2 {
		t.Fatalf("%d v2 rows of %d at 100 per mille", v2, len(rows))
	}
}

// Repeats favour low ranks: the hottest hash is far above the mean.
func TestZipfSkew(t *testing.T) {
	_, tr := generate(t, small(nil))
	mean := float64(tr.Rows) / float64(tr.Distinct)
	if float64(tr.TopCount) < 20*mean {
		t.Fatalf("top hash seen %d times, mean %.1f: not skewed", tr.TopCount, mean)
	}
}

func TestBadConfig(t *testing.T) {
	tests := map[string]Config{
		"no rows":           small(func(c *Config) { c.Rows = 0 }),
		"distinct > rows":   small(func(c *Config) { c.Distinct = c.Rows + 1 }),
		"negative known":    small(func(c *Config) { c.Known = -1 }),
		"zipf s = 1":        small(func(c *Config) { c.ZipfS = 1 }),
		"zipf v < 1":        small(func(c *Config) { c.ZipfV = 0.5 }),
		"v2 over 1000":      small(func(c *Config) { c.V2PerMille = 1001 }),
		"negative window":   small(func(c *Config) { c.Window = -time.Second }),
		"negative distinct": small(func(c *Config) { c.Distinct = -5 }),
	}
	for name, c := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(c); err == nil {
				t.Fatal("New accepted a bad config")
			}
			if _, err := Count(context.Background(), c); err == nil {
				t.Fatal("Count accepted a bad config")
			}
		})
	}
}

func TestCountEqualsGenerate(t *testing.T) {
	c := small(func(c *Config) { c.Known = 1000 })
	_, want := generate(t, c)
	got, err := Count(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Distinct != want.Distinct || got.MaxObservedAt != want.MaxObservedAt {
		t.Fatalf("Count %+v, generate %+v", got, want)
	}
}
