package capture

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// TestHashSightingsAreCapped drives a node's receive path with get_peers
// (and announce_peer) from loopback senders (each port one, as forged
// source addresses are on the Internet) at chosen times, under a cap of
// 3 a window: a hash's fourth and later senders within its window are
// answered, not recorded, and counted in hash_cap_dropped; the window's
// end, another hash, a cap of 0 or a window of 0 lift it; a sender's
// repeat is a repeat (repeats_dropped), not counted against the cap;
// announce_peer is neither capped nor counted.
func TestHashSightingsAreCapped(t *testing.T) {
	const w, limit = 10 * time.Minute, 3
	senders := func(from, to int, hash int, at time.Duration, recorded bool) []query {
		var qs []query
		for p := from; p < to; p++ {
			qs = append(qs, query{port: uint16(p), hash: hash, at: at, recorded: recorded})
		}
		return qs
	}
	cat := func(parts ...[]query) []query {
		var out []query
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name     string
		limit    int
		window   time.Duration
		queries  []query
		capped   int64 // hash_cap_dropped
		repeated int64 // repeats_dropped
	}{
		{"limit+2 senders: limit recorded, 2 capped", limit, w,
			cat(senders(1, 1+limit, 0, 0, true), senders(1+limit, 3+limit, 0, time.Second, false)), 2, 0},
		{"the cap lifts when the hash's window ends", limit, w,
			cat(senders(1, 1+limit, 0, 0, true), senders(1+limit, 2+limit, 0, time.Second, false),
				senders(10, 10+limit, 0, w, true), senders(20, 21, 0, w+time.Second, false)), 2, 0},
		{"the window runs from the first one counted", limit, w,
			cat(senders(1, 2, 0, 0, true), senders(2, 1+limit, 0, w-time.Second, true),
				senders(10, 11, 0, w-time.Second, false), senders(11, 12, 0, w+time.Second, true)), 1, 0},
		{"hashes are capped apart", limit, w,
			cat(senders(1, 1+limit, 1, 0, true), senders(1, 1+limit, 2, 0, true),
				senders(10, 11, 1, time.Second, false), senders(10, 11, 2, time.Second, false)), 2, 0},
		{"a sender's repeat is a repeat, not counted against the cap", limit, w,
			cat(senders(1, 2, 0, 0, true), senders(1, 2, 0, time.Second, false), senders(1, 2, 0, 2*time.Second, false),
				senders(2, 1+limit, 0, 3*time.Second, true), senders(9, 10, 0, 4*time.Second, false)), 1, 2},
		{"announce_peer is neither capped nor counted", limit, w,
			cat([]query{{port: 1, announce: true, recorded: true}, {port: 2, announce: true, recorded: true}},
				senders(3, 3+limit, 0, time.Second, true),
				[]query{{port: 9, announce: true, at: 2 * time.Second, recorded: true}},
				senders(10, 11, 0, 3*time.Second, false)), 1, 0},
		{"a cap of 0 records every sender", 0, w, senders(1, 40, 0, 0, true), 0, 0},
		{"a window of 0 records every query", limit, 0, cat(senders(1, 10, 0, 0, true), senders(1, 10, 0, 0, true)), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := fuzzNode(t)
			start := time.Now()
			n.r.recent = newRecentSet(tt.window, reach.Rule{Loopback: true}, start)
			n.r.hashCap = newHashCap(tt.limit, tt.window, start, hashCapBuckets)
			t.Cleanup(n.r.recent.close)
			t.Cleanup(n.r.hashCap.close)
			var want []string
			for i, q := range tt.queries {
				from := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 40000+q.port)
				at := start.Add(q.at)
				n.handle(queryPacket(n, i, q, from, at), from, at)
				if q.recorded {
					want = append(want, fmt.Sprintf("%s %s from %s", sourceOf(q), hashN(q.hash), from))
				}
			}
			var got []string
			for _, o := range n.batch {
				got = append(got, fmt.Sprintf("%s %s from %s", o.Source, o.InfoHash[:], o.NodeAddr))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("recorded\n  %q\nwant\n  %q", got, want)
			}
			st := n.r.c.stats()
			if st.HashCapDropped != tt.capped || st.RepeatsDropped != tt.repeated {
				t.Errorf("hash_cap_dropped %d, repeats_dropped %d; want %d and %d", st.HashCapDropped, st.RepeatsDropped, tt.capped, tt.repeated)
			}
			if q := st.Queries["get_peers"] + st.Queries["announce_peer"]; q != int64(len(tt.queries)) || st.BadTokens+st.Malformed != 0 {
				t.Errorf("%d queries counted (%d bad tokens, %d malformed), want %d, all good", q, st.BadTokens, st.Malformed, len(tt.queries))
			}
		})
	}
}

// TestHashCapIsBounded: a flood of distinct hashes (each a sighting of
// its own, as forged senders of random hashes send) fills the fixed table
// and evicts, allocating nothing and capping (almost) none of them; a
// hash at its cap before the flood is still capped after it (a new hash
// evicts the live entries of fewest sightings first), and an evicted
// hash only starts counting again.
func TestHashCapIsBounded(t *testing.T) {
	start := time.Now()
	c := newHashCap(3, time.Hour, start, hashCapBuckets)
	defer c.close()
	slots := len(c.slots)
	busy := hashN(1)
	for i := range 3 {
		if c.full(busy, start) {
			t.Fatalf("sighting %d of 3 of a hash capped", i+1)
		}
	}
	var ih [20]byte
	const flood = 2 * hashCapBuckets * recentWays
	capped, i := 0, 0
	allocs := testing.AllocsPerRun(flood, func() {
		i++
		ih[0], ih[1], ih[2], ih[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		if c.full(ih[:], start.Add(time.Duration(i)*time.Microsecond)) {
			capped++
		}
	})
	if allocs != 0 || len(c.slots) != slots {
		t.Errorf("a flood of %d hashes: %v allocations a sighting, %d slots (%d before); want none, and no growth", flood, allocs, len(c.slots), slots)
	}
	if capped != 0 {
		t.Errorf("%d of %d distinct hashes capped, each seen once", capped, flood)
	}
	if !c.full(busy, start.Add(time.Minute)) {
		t.Errorf("a hash at its cap before a flood of distinct hashes is no longer capped after it")
	}
}

// TestHashCapEvictsFewestSightings: in a full bucket (a table of one
// bucket here, 8 entries; a cap of 2) hash 8 takes an expired entry
// first, else the live one of fewest sightings, the oldest of those; the
// hash evicted counts from 1 again: it is recorded twice more before its
// cap, the others as many times as they have left.
func TestHashCapEvictsFewestSightings(t *testing.T) {
	const w = 10 * time.Minute
	type see struct {
		times int
		at    time.Duration
	}
	twice := see{2, 0}
	for _, tt := range []struct {
		name    string
		sees    [9]see // hash i's sightings, in turn
		evicted int
		left    [9]int // get_peers each hash has left before its cap, after
	}{
		{"the live entry of fewest sightings",
			[9]see{twice, {1, time.Second}, twice, twice, twice, twice, twice, twice, {1, 2 * time.Second}},
			1, [9]int{0, 2, 0, 0, 0, 0, 0, 0, 1}},
		{"the oldest of those",
			[9]see{twice, {1, 2 * time.Second}, {1, time.Second}, twice, twice, twice, twice, twice, {1, 3 * time.Second}},
			2, [9]int{0, 1, 2, 0, 0, 0, 0, 0, 1}},
		{"an expired entry before any live one",
			[9]see{twice, {1, w}, {1, w}, {1, w}, {1, w}, {1, w}, {1, w}, {1, w}, {1, w + time.Second}},
			0, [9]int{2, 1, 1, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			c := newHashCap(2, w, start, 1)
			defer c.close()
			last := time.Duration(0)
			for h, s := range tt.sees {
				for range s.times {
					if c.full(hashN(h), start.Add(s.at)) {
						t.Fatalf("hash %d capped within its 2 sightings", h)
					}
				}
				last = max(last, s.at)
			}
			// The evicted hash last: its new entry evicts another.
			order := []int{}
			for h := range tt.sees {
				if h != tt.evicted {
					order = append(order, h)
				}
			}
			for _, h := range append(order, tt.evicted) {
				left := 0
				for left <= 3 && !c.full(hashN(h), start.Add(last)) {
					left++
				}
				if left != tt.left[h] {
					t.Errorf("hash %d: %d get_peers recorded before its cap, want %d", h, left, tt.left[h])
				}
			}
		})
	}
}

// TestHashCapCountsEvictions: in a table of one bucket (8 entries, a cap
// of 2) a new hash that takes a live entry is counted (hash_cap_evicted),
// once for each; one that takes an empty or expired entry, a hash's own
// entry counted again, and a hash at its cap are not.
func TestHashCapCountsEvictions(t *testing.T) {
	const w = 10 * time.Minute
	type see struct {
		hash int
		at   time.Duration
	}
	hashes := func(from, to int, at time.Duration) []see {
		var s []see
		for h := from; h < to; h++ {
			s = append(s, see{h, at})
		}
		return s
	}
	cat := func(parts ...[]see) []see {
		var out []see
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		sees    []see
		evicted int64
	}{
		{"8 hashes fill the bucket: none", hashes(0, 8, 0), 0},
		{"a ninth live hash evicts one", hashes(0, 9, 0), 1},
		{"each new hash past 8 evicts one", hashes(0, 20, time.Second), 12},
		{"expired entries are taken, not evicted", cat(hashes(0, 8, 0), hashes(8, 16, w)), 0},
		{"a hash counted again, or at its cap, evicts none",
			cat(hashes(0, 8, 0), hashes(0, 8, time.Second), hashes(0, 8, 2*time.Second)), 0},
		{"an evicted hash back evicts another", // hash 0 (the oldest at its cap), then hash 8 (seen once)
			cat(hashes(0, 8, 0), hashes(0, 8, 0), hashes(8, 9, time.Second), hashes(0, 1, 2*time.Second)), 2},
		{"no cap: nothing counted", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			limit := 2
			if tt.sees == nil {
				limit = 0
			}
			c := newHashCap(limit, w, start, 1)
			defer c.close()
			for _, s := range tt.sees {
				c.full(hashN(s.hash), start.Add(s.at))
			}
			if got := c.evicted(); got != tt.evicted {
				t.Errorf("hash_cap_evicted %d, want %d", got, tt.evicted)
			}
		})
	}
}

// TestCaptureCapsForgedSenders runs capture on loopback with a cap of 3:
// 5 senders (sockets) ask get_peers of one hash, 3 are recorded and 2
// counted (hash_cap_dropped); another hash is recorded.
func TestCaptureCapsForgedSenders(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl, o.MaxSightingsPerHash = false, 3
	sink := &memSink{}
	addrs, wait := runAsync(t, ctx, o, sink)
	for i := range 5 {
		replies(t, sendAll(t, addrs[0], krpc.AppendGetPeers(nil, []byte{'q', byte(i)}, peerID, hashN(0))), 1)
	}
	replies(t, sendAll(t, addrs[0], krpc.AppendGetPeers(nil, []byte("q9"), peerID, hashN(1))), 1)
	cancel()
	st, _ := wait()
	if st.HashCapDropped != 2 || st.Observations != 4 || st.Queries["get_peers"] != 6 {
		t.Errorf("hash_cap_dropped %d, observations %d, get_peers %d; want 2, 4, 6", st.HashCapDropped, st.Observations, st.Queries["get_peers"])
	}
}

// TestCaptureCountsHashCapEvictions runs capture on loopback with a cap
// table of one bucket (8 entries): get_peers of 8 + k distinct hashes,
// each within its window, evict k live entries, which the run's stats
// count (hash_cap_evicted); all are recorded (each hash seen once).
func TestCaptureCountsHashCapEvictions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		hashes  int
		evicted int64
	}{
		{"full: 11 hashes", recentWays + 3, 3},
		{"not full: 8 hashes", recentWays, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := testOptions()
			o.Crawl, o.hashCapBuckets = false, 1
			sink := &memSink{}
			addrs, wait := runAsync(t, ctx, o, sink)
			var qs [][]byte
			for i := range tt.hashes {
				qs = append(qs, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
			}
			replies(t, sendAll(t, addrs[0], qs...), tt.hashes) // all handled
			cancel()
			st, _ := wait()
			if st.HashCapEvicted != tt.evicted || st.Observations != int64(tt.hashes) || st.HashCapDropped != 0 {
				t.Errorf("hash_cap_evicted %d, observations %d, hash_cap_dropped %d; want %d, %d, 0",
					st.HashCapEvicted, st.Observations, st.HashCapDropped, tt.evicted, tt.hashes)
			}
		})
	}
}

// TestHashCapBelowItRecordsAsBefore replays one realistic stream of
// queries (hashes of Zipf-like popularity, each asked by up to the cap's
// number of distinct senders a window, with repeats and announce_peer,
// over three windows) through a node with the default cap and one with
// none: below the cap, the cap changes nothing, and both record the same
// observations in the same order (observed_at aside: the wall clock's).
func TestHashCapBelowItRecordsAsBefore(t *testing.T) {
	const w = 10 * time.Minute
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.2, 1, DefaultMaxSightingsPerHash-1)
	var qs []query
	for win := range 3 {
		for h := range 2000 {
			senders := 1 + int(zipf.Uint64()) // 1 to the cap, most 1 or 2
			for s := range senders {
				at := time.Duration(win)*w + time.Duration(rng.Int64N(int64(w-time.Second)))
				port := uint16(1 + rng.IntN(60000))
				qs = append(qs, query{port: port, hash: h, at: at, announce: s%5 == 4})
				if rng.IntN(4) == 0 { // a lookup's retry
					qs = append(qs, query{port: port, hash: h, at: at + time.Second})
				}
			}
		}
	}
	slices.SortStableFunc(qs, func(a, b query) int { return cmp.Compare(a.at, b.at) })
	run := func(limit int) ([]schema.Observation, Stats) {
		n := fuzzNode(t)
		start := time.Now()
		n.r.recent = newRecentSet(w, reach.Rule{Loopback: true}, start)
		n.r.hashCap = newHashCap(limit, w, start, hashCapBuckets)
		t.Cleanup(n.r.recent.close)
		t.Cleanup(n.r.hashCap.close)
		for i, q := range qs {
			from := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), q.port)
			at := start.Add(q.at)
			n.handle(queryPacket(n, i, q, from, at), from, at)
		}
		for i := range n.batch {
			n.batch[i].ObservedAt = 0
		}
		return n.batch, n.r.c.stats()
	}
	capped, cs := run(DefaultMaxSightingsPerHash)
	plain, ps := run(0)
	if cs.HashCapDropped != 0 || len(capped) != len(plain) || !reflect.DeepEqual(capped, plain) {
		t.Errorf("%d queries: %d recorded with the cap (hash_cap_dropped %d), %d without; want the same observations",
			len(qs), len(capped), cs.HashCapDropped, len(plain))
	}
	if ps.RepeatsDropped == 0 || len(plain) < 5000 {
		t.Errorf("the stream is not what it means to be: %d recorded, %d repeats", len(plain), ps.RepeatsDropped)
	}
}

// BenchmarkHashCap is the cap's cost per get_peers recorded, a flood of
// distinct hashes (each a miss that takes an entry), as
// BenchmarkRecentSet's is the recent set's: a query pays both.
func BenchmarkHashCap(b *testing.B) {
	start := time.Now()
	c := newHashCap(DefaultMaxSightingsPerHash, DefaultRepeatWindow, start, hashCapBuckets)
	defer c.close()
	var ih [20]byte
	i := 0
	for b.Loop() {
		i++
		ih[0], ih[1], ih[2], ih[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		c.full(ih[:], start.Add(time.Duration(i)*time.Microsecond))
	}
}
