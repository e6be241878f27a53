package capture

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// query is one incoming query of a TestRepeatsAreOneSighting case.
type query struct {
	port     uint16        // the sender's, on 127.0.0.1
	announce bool          // announce_peer (with a valid token), else get_peers
	hash     int           // hashN's
	at       time.Duration // after the run's start
	recorded bool          // whether it must be recorded
}

// TestRepeatsAreOneSighting drives a node's receive path with queries
// from loopback senders at chosen times: a sender's get_peers of a hash,
// and its announce_peer of it, are recorded once per window, each repeat
// answered and counted in repeats_dropped; another sender (port, on
// loopback), hash or kind, or the window's end, is another sighting; a
// window of 0 records every query, as capture did before the recent set.
func TestRepeatsAreOneSighting(t *testing.T) {
	const w = 10 * time.Minute
	tests := []struct {
		name    string
		window  time.Duration
		queries []query
	}{
		{"repeats within the window are one", w, []query{
			{port: 1, at: 0, recorded: true},
			{port: 1, at: time.Second},
			{port: 1, at: time.Minute},
			{port: 1, at: w - time.Second},
		}},
		{"after the window, another", w, []query{
			{port: 1, at: 0, recorded: true},
			{port: 1, at: w + time.Second, recorded: true},
			{port: 1, at: w + 2*time.Second},
		}},
		{"the window runs from the query recorded, not from a repeat", w, []query{
			{port: 1, at: 0, recorded: true},
			{port: 1, at: w - time.Second},
			{port: 1, at: w + time.Second, recorded: true},
		}},
		{"another sender, another sighting", w, []query{
			{port: 1, at: 0, recorded: true},
			{port: 2, at: time.Second, recorded: true},
			{port: 1, at: 2 * time.Second},
			{port: 2, at: 3 * time.Second},
		}},
		{"another hash, another sighting", w, []query{
			{port: 1, hash: 1, at: 0, recorded: true},
			{port: 1, hash: 2, at: time.Second, recorded: true},
			{port: 1, hash: 1, at: 2 * time.Second},
		}},
		{"announce_peer after get_peers is another kind", w, []query{
			{port: 1, at: 0, recorded: true},
			{port: 1, at: time.Second},
			{port: 1, announce: true, at: 2 * time.Second, recorded: true},
			{port: 1, announce: true, at: 3 * time.Second},
			{port: 1, at: 4 * time.Second},
		}},
		{"window 0 records every query", 0, []query{
			{port: 1, at: 0, recorded: true},
			{port: 1, at: time.Second, recorded: true},
			{port: 1, announce: true, at: 2 * time.Second, recorded: true},
			{port: 1, announce: true, at: 2 * time.Second, recorded: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := fuzzNode(t)
			start := time.Now()
			n.r.recent = newRecentSet(tt.window, reach.Rule{Loopback: true}, start)
			t.Cleanup(n.r.recent.close)
			var want []string
			dropped := 0
			for i, q := range tt.queries {
				from := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 40000+q.port)
				at := start.Add(q.at)
				n.handle(queryPacket(n, i, q, from, at), from, at)
				if q.recorded {
					want = append(want, fmt.Sprintf("%s %s from %s", sourceOf(q), hashN(q.hash), from))
				} else {
					dropped++
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
			if st.RepeatsDropped != int64(dropped) {
				t.Errorf("repeats_dropped %d, want %d", st.RepeatsDropped, dropped)
			}
			if q := st.Queries["get_peers"] + st.Queries["announce_peer"]; q != int64(len(tt.queries)) || st.BadTokens+st.Malformed != 0 {
				t.Errorf("%d queries counted (%d bad tokens, %d malformed), want %d, all good", q, st.BadTokens, st.Malformed, len(tt.queries))
			}
		})
	}
}

func sourceOf(q query) string {
	if q.announce {
		return schema.SourceAnnouncePeer
	}
	return schema.SourceGetPeers
}

// queryPacket is q, the i-th query of a test, as from sends it at at: a
// get_peers, or an announce_peer with a token n gave from.
func queryPacket(n *node, i int, q query, from netip.AddrPort, at time.Time) []byte {
	if q.announce {
		tok := n.r.tokens.make(at, from.Addr())
		return krpc.AppendAnnouncePeer(nil, []byte(fmt.Sprint(i)), peerID, hashN(q.hash), 6881, tok[:])
	}
	return krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(q.hash))
}

// TestRecentSetSenders: who counts as one sender. On the Internet an
// address, whatever its port (a host picks its source ports; hosts behind
// one NAT are one sender); on loopback, and in a private range the run
// was pointed into, an address and port. A private address in a run on
// the Internet is as a public one.
func TestRecentSetSenders(t *testing.T) {
	tests := []struct {
		name         string
		rule         reach.Rule
		first, again string
		repeat       bool
	}{
		{"public, another port", reach.Rule{}, "203.0.113.5:6881", "203.0.113.5:51413", true},
		{"public, another address", reach.Rule{}, "203.0.113.5:6881", "203.0.113.6:6881", false},
		{"public, same address and port", reach.Rule{}, "203.0.113.5:6881", "203.0.113.5:6881", true},
		{"loopback, another port", reach.Rule{Loopback: true}, "127.0.0.1:6881", "127.0.0.1:6882", false},
		{"loopback, same port", reach.Rule{Loopback: true}, "127.0.0.1:6881", "127.0.0.1:6881", true},
		{"private in a private run, another port", reach.Rule{Private: true}, "192.168.1.2:6881", "192.168.1.2:6882", false},
		{"private in an Internet run, another port", reach.Rule{}, "192.168.1.2:6881", "192.168.1.2:6882", true},
		{"IPv4-mapped is its IPv4 address", reach.Rule{}, "203.0.113.5:6881", "[::ffff:203.0.113.5]:6881", true},
	}
	start := time.Now()
	ih := hashN(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRecentSet(time.Minute, tt.rule, start)
			defer s.close()
			if s.repeat(netip.MustParseAddrPort(tt.first), ih, mGetPeers, start) {
				t.Fatalf("%s: the first query is a repeat", tt.first)
			}
			if got := s.repeat(netip.MustParseAddrPort(tt.again), ih, mGetPeers, start.Add(time.Second)); got != tt.repeat {
				t.Errorf("%s after %s: repeat %v, want %v", tt.again, tt.first, got, tt.repeat)
			}
		})
	}
}

// TestRecentSetIsBounded: a flood of distinct keys (a sender's random
// hashes, or many senders) fills the fixed table and evicts, allocating
// nothing and dropping (almost) none of them as repeats; a key recorded
// just before the flood's end is still found.
func TestRecentSetIsBounded(t *testing.T) {
	start := time.Now()
	s := newRecentSet(time.Hour, reach.Rule{}, start)
	defer s.close()
	slots := len(s.slots)
	from := netip.MustParseAddrPort("203.0.113.5:6881")
	var ih [20]byte
	const flood = 2 * recentBuckets * recentWays
	dropped := 0
	i := 0
	allocs := testing.AllocsPerRun(flood, func() {
		i++
		ih[0], ih[1], ih[2], ih[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		if s.repeat(from, ih[:], mGetPeers, start.Add(time.Duration(i)*time.Microsecond)) {
			dropped++
		}
	})
	if allocs != 0 || len(s.slots) != slots {
		t.Errorf("a flood of %d keys: %v allocations a query, %d slots (%d before); want none, and no growth", flood, allocs, len(s.slots), slots)
	}
	// A fingerprint shared within a bucket: about 8 in 2^32 a query.
	if dropped > 2 {
		t.Errorf("%d of %d distinct keys dropped as repeats", dropped, flood)
	}
	if !s.repeat(from, ih[:], mGetPeers, start.Add(time.Duration(i+1)*time.Microsecond)) {
		t.Errorf("the flood's last key is not found again")
	}
}

// BenchmarkRecentSet is the recent set's cost per query, a flood of
// distinct keys (each a miss that takes an entry) from one sender.
func BenchmarkRecentSet(b *testing.B) {
	start := time.Now()
	s := newRecentSet(DefaultRepeatWindow, reach.Rule{}, start)
	defer s.close()
	from := netip.MustParseAddrPort("203.0.113.5:6881")
	var ih [20]byte
	i := 0
	for b.Loop() {
		i++
		ih[0], ih[1], ih[2], ih[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		s.repeat(from, ih[:], mGetPeers, start.Add(time.Duration(i)*time.Microsecond))
	}
}

// TestRecentSetCloseLeavesHeapTable: a table on the Go heap (the mapping
// failed) is not unmapped by close: munmap of its pages would take them
// from under the heap. close used to unmap any table.
func TestRecentSetCloseLeavesHeapTable(t *testing.T) {
	s := newRecentSet(time.Minute, reach.Rule{}, time.Now())
	s.close() // the mapped one
	s.slots, s.mapped = make([]uint64, recentBuckets*recentWays), false
	s.close()
	if s.slots == nil {
		t.Fatal("close dropped a table on the heap as if it had unmapped it")
	}
	s.slots[len(s.slots)-1] = 1 // still the heap's
}

// TestRecentSetCountsEarlyEvictions: a full bucket (a table of one bucket
// here, 8 entries) evicts its oldest entry for a new key; a live one
// (within its window) is counted, and its key's repeat is recorded again,
// an expired one is not counted. onEvicted is called once, when the
// evictions first reach 1% of the keys recorded (and recentWarnMin).
func TestRecentSetCountsEarlyEvictions(t *testing.T) {
	const w = 10 * time.Minute
	type ask struct {
		key    int
		at     time.Duration
		repeat bool // want
	}
	// spaced is n keys, each asked a window after the one before: none
	// evicts, all are recorded.
	spaced := func(n int) []ask {
		var out []ask
		for k := range n {
			out = append(out, ask{key: 100000 + k, at: time.Duration(k) * (w + time.Second)})
		}
		return out
	}
	keys := func(from, to int, at time.Duration) []ask {
		var out []ask
		for k := from; k < to; k++ {
			out = append(out, ask{key: k, at: at})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		asks    []ask
		evicted int64
		warns   bool // onEvicted called (once)
	}{
		{"eight keys fit", keys(0, recentWays, 0), 0, false},
		{"a ninth evicts a live one: too few to warn", keys(0, recentWays+1, 0), 1, false},
		{"twelve evict four: a third, warned", keys(0, recentWays+4, time.Second), 4, true},
		{"an expired entry goes first", append(keys(0, recentWays, 0), keys(recentWays, recentWays+3, w+time.Second)...), 0, false},
		{"the evicted key's repeat is recorded again", append(keys(0, recentWays+1, 0),
			ask{key: 0, at: time.Minute}, ask{key: 0, at: 2 * time.Minute, repeat: true}), 2, false},
		{"four evicted of 512 recorded: under 1%, not warned", append(spaced(500), keys(1000, 1000+recentWays+4, 500*(w+time.Second))...), 4, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			s := newRecentSetOf(w, reach.Rule{}, start, 1)
			defer s.close()
			calls := 0
			s.onEvicted = func() { calls++ }
			from := netip.MustParseAddrPort("203.0.113.5:6881")
			for i, a := range tt.asks {
				if got := s.repeat(from, hashN(a.key), mGetPeers, start.Add(a.at)); got != a.repeat {
					t.Fatalf("ask %d (key %d at %s): repeat %v, want %v", i, a.key, a.at, got, a.repeat)
				}
			}
			if got := s.evicted(); got != tt.evicted {
				t.Errorf("evicted %d live entries, want %d", got, tt.evicted)
			}
			if want := map[bool]int{true: 1}[tt.warns]; calls != want {
				t.Errorf("onEvicted called %d times, want %d", calls, want)
			}
		})
	}
}

// TestCaptureWarnsOnceWhenRecentSetIsFull runs capture with a recent set
// of one bucket (8 entries) on loopback: 12 distinct hashes from one
// sender, each within the window, evict 4 live entries; the run's stats
// count them (repeat_window_evicted) and its log has one warning saying
// what to do. A run that evicts none warns not.
func TestCaptureWarnsOnceWhenRecentSetIsFull(t *testing.T) {
	for _, tt := range []struct {
		name    string
		hashes  int
		evicted int64
	}{
		{"full: 12 hashes", recentWays + 4, 4},
		{"not full: 8 hashes", recentWays, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var logs bytes.Buffer
			o := testOptions()
			o.Crawl, o.recentBuckets = false, 1
			o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			sink := &memSink{}
			addrs, wait := runAsync(t, ctx, o, sink)
			var qs [][]byte
			for i := range tt.hashes {
				qs = append(qs, krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)))
			}
			replies(t, sendAll(t, addrs[0], qs...), tt.hashes) // all handled
			cancel()
			st, _ := wait()
			if st.RepeatEvicted != tt.evicted || st.Observations != int64(tt.hashes) {
				t.Errorf("repeat_window_evicted %d, observations %d; want %d and %d", st.RepeatEvicted, st.Observations,
					tt.evicted, tt.hashes)
			}
			warns := strings.Count(logs.String(), "level=WARN")
			if want := int(min(tt.evicted, 1)); warns != want ||
				want == 1 && !strings.Contains(logs.String(), "give a shorter --repeat-window") {
				t.Errorf("%d warnings, want %d, saying to give a shorter --repeat-window:\n%s", warns, want, logs.String())
			}
		})
	}
}
