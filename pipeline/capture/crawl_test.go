package capture

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
)

// TestCrawlerRecordsEverySample: a BEP 51 reply with k samples gives
// exactly k observations, each hash in order (magnetico's
// Samples[i:(i+1)*20] slicing kept only a fraction of them).
func TestCrawlerRecordsEverySample(t *testing.T) {
	tests := []struct {
		name    string
		samples int
	}{{"none", 0}, {"one", 1}, {"two", 2}, {"twenty", 20}, {"more than a reply usually has", 50}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := fuzzNode(t)
			from := netip.MustParseAddrPort("127.0.0.1:4000")
			var samples []byte
			for i := range tc.samples {
				samples = append(samples, bytes.Repeat([]byte{byte(i + 1)}, 20)...)
			}
			n.r.crawler.pending[7] = pending{addr: from, sent: time.Now(), kind: kindSample}
			remoteID := []byte("remote-node-id-01234")
			n.handle(krpc.AppendReply(nil, []byte{'i', 0, 0, 7}, krpc.Reply{ID: remoteID, HasSamples: true,
				Samples: samples, Num: int64(tc.samples), Interval: 30}, nil), from, time.Now())
			if len(n.batch) != tc.samples {
				t.Fatalf("%d observations for %d samples", len(n.batch), tc.samples)
			}
			for i, o := range n.batch {
				if o.InfoHash[0] != byte(i+1) || o.InfoHash[19] != byte(i+1) || o.Source != schema.SourceSampleInfohashes ||
					string(o.NodeID) != string(remoteID) || o.NodeAddr != from.String() {
					t.Fatalf("observation %d: %+v", i, o)
				}
			}
			st := n.r.c.stats()
			if st.SampleResponses != 1 || st.Samples != int64(tc.samples) {
				t.Fatalf("stats %+v", st)
			}
			// The node is due again only after its interval.
			if d := n.r.crawler.due; len(d) != 1 || time.Until(d[0].at) < 29*time.Second {
				t.Fatalf("revisit %+v, want in 30s", d)
			}
		})
	}
}

// TestCrawlerFallsBackToFindNode: a node answering 204 is asked for
// nodes with find_node instead, and never sampled again.
func TestCrawlerFallsBackToFindNode(t *testing.T) {
	n := fuzzNode(t)
	c := n.r.crawler
	from := netip.MustParseAddrPort("127.0.0.1:4001")
	c.remotes[from] = &remote{}
	c.pending[9] = pending{addr: from, sent: time.Now(), kind: kindSample}
	n.handle(krpc.AppendError(nil, []byte{'i', 0, 0, 9}, krpc.ErrMethodUnknown, "Method Unknown"), from, time.Now())
	if len(c.finds) != 1 || c.finds[0] != from || c.remotes[from].state != stateNoBEP51 || len(c.due) != 0 {
		t.Fatalf("finds %v, state %d, due %v", c.finds, c.remotes[from].state, c.due)
	}
	if !c.sendNext(time.Now()) {
		t.Fatal("nothing sent")
	}
	var p pending
	for _, v := range c.pending {
		p = v
	}
	if p.kind != kindFindNode || p.addr != from || n.r.c.findNodeQueries.Load() != 1 {
		t.Fatalf("sent %+v", p)
	}
}

// TestCrawlerRecordsARepeatedSampleOnce: a BEP 51 reply that repeats a
// sample gives one observation per distinct hash, in the order of first
// appearance (each repeat used to be one more observation: a node could
// make its hash look seen thousands of times per reply).
func TestCrawlerRecordsARepeatedSampleOnce(t *testing.T) {
	n := fuzzNode(t)
	from := netip.MustParseAddrPort("127.0.0.1:4003")
	h := func(b byte) []byte { return bytes.Repeat([]byte{b}, 20) }
	samples := bytes.Join([][]byte{h(1), h(2), h(1), h(1), h(3), h(2)}, nil)
	for round, key := range []byte{11, 12} { // the second reply records its samples again
		n.r.crawler.pending[uint32(key)] = pending{addr: from, sent: time.Now(), kind: kindSample}
		n.handle(krpc.AppendReply(nil, []byte{'i', 0, 0, key}, krpc.Reply{ID: []byte("remote-node-id-01234"), HasSamples: true,
			Samples: samples, Num: 3, Interval: 30}, nil), from, time.Now())
		var got []byte
		for _, o := range n.batch {
			got = append(got, o.InfoHash[0])
		}
		if string(got) != "\x01\x02\x03" {
			t.Fatalf("reply %d: observations of %v, want 1, 2, 3 once each", round+1, got)
		}
		n.batch = n.batch[:0]
	}
}
