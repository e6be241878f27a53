package capture

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtstate"
	"github.com/infohash/infohash/internal/reach"
)

// TestFetchLookupsDropped: the writer leaves out the incoming queries of
// the fetch whose node ID is saved in the --dht-state directory, reading
// the file again when a fetch writes it during the run; every other
// observation is kept.
func TestFetchLookupsDropped(t *testing.T) {
	fetchA, fetchB, other := bytes.Repeat([]byte{0xaa}, 20), bytes.Repeat([]byte{0xbb}, 20), bytes.Repeat([]byte{0x11}, 20)
	fetchState := func(id []byte) string {
		return `{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "` + hex.EncodeToString(id) + `", "nodes": []}`
	}
	obs := func(source string, id []byte) schema.Observation {
		return schema.Observation{InfoHash: [20]byte{1}, Source: source, NodeID: id}
	}
	// each of a run's batches: one get_peers from fetch A, one from B,
	// one from another node, an announce from A, a sample A's node gave
	// and a get_peers without a node ID.
	batch := func() []schema.Observation {
		return []schema.Observation{obs(schema.SourceGetPeers, fetchA), obs(schema.SourceGetPeers, fetchB),
			obs(schema.SourceGetPeers, other), obs(schema.SourceAnnouncePeer, fetchA),
			obs(schema.SourceSampleInfohashes, fetchA), obs(schema.SourceGetPeers, nil)}
	}
	const keep, remove = "", "-"
	for _, tt := range []struct {
		name  string
		noDir bool
		files []string // the file before each batch: content, keep as it is, or remove
		kept  []int    // observations kept of each batch
	}{
		{"no --dht-state", true, []string{keep}, []int{6}},
		{"no fetch state", false, []string{keep}, []int{6}},
		{"fetch A's", false, []string{fetchState(fetchA)}, []int{4}},
		{"written during the run", false, []string{keep, fetchState(fetchA), keep}, []int{6, 4, 4}},
		{"a new ID: both left out", false, []string{fetchState(fetchA), fetchState(fetchB)}, []int{4, 3}},
		{"removed: A still left out", false, []string{fetchState(fetchA), remove}, []int{4, 4}},
		{"corrupt", false, []string{`{"kind": "` + dhtstate.FetchKind + `", "id": "aaaa`}, []int{6}},
		{"not fetch's", false, []string{`{"kind": "other", "version": 1, "id": "` + hex.EncodeToString(fetchA) + `"}`}, []int{6}},
		{"bad id", false, []string{`{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "aa"}`}, []int{6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, dhtstate.FetchFile)
			f := newFetchIDs(dir)
			if tt.noDir {
				f = newFetchIDs("")
				if err := os.WriteFile(p, []byte(fetchState(fetchA)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for i, content := range tt.files {
				switch content {
				case keep:
				case remove:
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				default: // as fetch writes it: a new file renamed over the old one
					if err := os.WriteFile(p+".tmp", []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(p+".tmp", p); err != nil {
						t.Fatal(err)
					}
				}
				b := batch()
				got, dropped := f.drop(b)
				if len(got) != tt.kept[i] || dropped != len(b)-tt.kept[i] {
					t.Errorf("batch %d: kept %d, dropped %d; want %d kept of %d", i, len(got), dropped, tt.kept[i], len(b))
				}
				for _, o := range got {
					if (o.Source == schema.SourceGetPeers || o.Source == schema.SourceAnnouncePeer) && tt.kept[i] < 6 &&
						bytes.Equal(o.NodeID, fetchA) {
						t.Errorf("batch %d: kept %s from fetch A's node", i, o.Source)
					}
				}
			}
		})
	}
}

// TestFetchLookupsTakeNoCap drives a node's receive path, under a cap
// of 3 get_peers a hash a window, with queries of one hash from loopback
// senders, some with the node ID of the fetch saved in --dht-state: the
// nodes leave those out before the recent set and the cap
// (fetch_lookups_skipped), so a fetch's lookups, as many as the cap, do
// not make a real sender's get_peers be capped, and a fetch's repeats
// and announce_peer are skipped, not repeats. Without the fetch's state
// file its queries are as anyone's; one saved during the run is read at
// the nodes' next check (fetchIDsCheck after the last).
func TestFetchLookupsTakeNoCap(t *testing.T) {
	const limit = 3
	fetchID := bytes.Repeat([]byte{0xfe}, 20)
	type q struct {
		port     uint16 // the sender's, on 127.0.0.1
		fetch    bool   // sent with fetch's node ID, else peerID
		announce bool
		at       time.Duration // after the start
		recorded bool
	}
	fetchN := func(n int, at time.Duration, recorded bool) []q { // n fetch lookups from n ports
		var qs []q
		for i := range n {
			qs = append(qs, q{port: uint16(100 + i), fetch: true, at: at, recorded: recorded})
		}
		return qs
	}
	real := func(port uint16, at time.Duration, recorded bool) q { return q{port: port, at: at, recorded: recorded} }
	for _, tt := range []struct {
		name    string
		saved   int // the fetch state file is saved before this query (-1: none)
		queries []q
		skipped int64 // fetch_lookups_skipped
		capped  int64 // hash_cap_dropped
		repeats int64 // repeats_dropped
	}{
		{"a fetch's lookups as many as the cap, then a real sender: recorded", 0,
			append(fetchN(limit, 0, false), real(1, time.Second, true)), limit, 0, 0},
		{"real senders past the cap are capped still", 0,
			append(append(fetchN(2, 0, false), real(1, 0, true), real(2, 0, true), real(3, 0, true)), real(4, time.Second, false)), 2, 1, 0},
		{"a fetch's repeats are skipped, not repeats", 0,
			[]q{{port: 100, fetch: true}, {port: 100, fetch: true, at: time.Second}, {port: 100, fetch: true, at: 2 * time.Second},
				real(1, 3*time.Second, true), real(1, 4*time.Second, false)}, 3, 0, 1},
		{"a fetch's announce_peer is skipped", 0,
			[]q{{port: 100, fetch: true, announce: true}, {port: 1, announce: true, at: time.Second, recorded: true}}, 1, 0, 0},
		{"no fetch state file: a fetch's lookups are as anyone's", -1,
			append(fetchN(limit, 0, true), real(1, time.Second, false)), 0, 1, 0},
		{"saved during the run: left out from the next check", 1,
			[]q{real(1, 0, true), {port: 100, fetch: true, at: fetchIDsCheck / 2, recorded: true},
				{port: 101, fetch: true, at: fetchIDsCheck}, real(2, fetchIDsCheck, true), real(3, fetchIDsCheck, false)}, 1, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			n := fuzzNode(t)
			start := time.Now()
			n.r.recent = newRecentSet(10*time.Minute, reach.Rule{Loopback: true}, start)
			n.r.hashCap = newHashCap(limit, 10*time.Minute, start, hashCapBuckets)
			n.r.fetch = newFetchIDs(dir)
			t.Cleanup(n.r.recent.close)
			t.Cleanup(n.r.hashCap.close)
			var want []string
			for i, qq := range tt.queries {
				if i == tt.saved {
					state := `{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "` + hex.EncodeToString(fetchID) + `", "nodes": []}`
					if err := os.WriteFile(filepath.Join(dir, dhtstate.FetchFile), []byte(state), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				from := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 40000+qq.port)
				at := start.Add(qq.at)
				id, tid := peerID, []byte(fmt.Sprint(i))
				if qq.fetch {
					id = fetchID
				}
				b := krpc.AppendGetPeers(nil, tid, id, hashN(0))
				if qq.announce {
					tok := n.r.tokens.make(at, from.Addr())
					b = krpc.AppendAnnouncePeer(nil, tid, id, hashN(0), 6881, tok[:])
				}
				n.handle(b, from, at)
				if qq.recorded {
					want = append(want, fmt.Sprintf("%s from %s", sourceOf(query{announce: qq.announce}), from))
				}
			}
			var got []string
			for _, o := range n.batch {
				got = append(got, fmt.Sprintf("%s from %s", o.Source, o.NodeAddr))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("recorded\n  %q\nwant\n  %q", got, want)
			}
			st := n.r.c.stats()
			if st.FetchLookups != tt.skipped || st.HashCapDropped != tt.capped || st.RepeatsDropped != tt.repeats {
				t.Errorf("fetch_lookups_skipped %d, hash_cap_dropped %d, repeats_dropped %d; want %d, %d, %d",
					st.FetchLookups, st.HashCapDropped, st.RepeatsDropped, tt.skipped, tt.capped, tt.repeats)
			}
		})
	}
}

// BenchmarkFetchLookupsDrop is the writer's cost per batch of
// Options.BatchSize get_peers observations, none from the fetch whose ID
// the directory holds: a stat of the file and a pass over the batch.
func BenchmarkFetchLookupsDrop(b *testing.B) {
	dir := b.TempDir()
	state := `{"kind": "` + dhtstate.FetchKind + `", "version": 1, "id": "` + hex.EncodeToString(bytes.Repeat([]byte{0xaa}, 20)) + `"}`
	if err := os.WriteFile(filepath.Join(dir, dhtstate.FetchFile), []byte(state), 0o644); err != nil {
		b.Fatal(err)
	}
	batch := make([]schema.Observation, DefaultOptions().BatchSize)
	for i := range batch {
		id := bytes.Repeat([]byte{0x11}, 20)
		id[0] = byte(i)
		batch[i] = schema.Observation{Source: schema.SourceGetPeers, NodeID: id}
	}
	f := newFetchIDs(dir)
	for b.Loop() {
		if _, n := f.drop(batch); n != 0 {
			b.Fatalf("dropped %d", n)
		}
	}
}
