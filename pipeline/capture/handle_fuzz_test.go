package capture

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// fuzzNode is a node with a real loopback socket and a crawler, but no
// library server and no read loop: tests drive handle directly.
func fuzzNode(t testing.TB) *node {
	t.Helper()
	sock, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	o, _ := checkOptions(testOptions())
	o.BatchSize = 1 << 30 // never flush; the test empties the batch
	r := &runner{opts: o, tokens: newTokens(time.Now()), replies: newReplyLimiter(reach.Rule{Loopback: true}), batches: make(chan []schema.Observation, 1)}
	n := &node{r: r, id: [20]byte{7}, sock: sock, pipe: newPipeConn(sock), fwd: rate.NewLimiter(0, 0)}
	n.tbl.Store(newTable(nil))
	n.good.Store(newTable(nil))
	r.crawler = newCrawler(r, []*node{n}, 0, 1)
	return n
}

// FuzzHandle feeds arbitrary packets through the whole receive path:
// decoding, query answering, crawler response handling and recording.
// It must never panic, must count every packet exactly once as malformed,
// a query or a response, and must record only 20-byte hashes.
func FuzzHandle(f *testing.F) {
	id := []byte("fuzz-node-id-0123456")
	f.Add(krpc.AppendGetPeers(nil, []byte("aa"), id, id))
	f.Add(krpc.AppendAnnouncePeer(nil, []byte("ab"), id, id, 80, []byte("12345678")))
	f.Add(krpc.AppendSampleInfohashes(nil, []byte("ac"), id, id))
	f.Add(krpc.AppendFindNode(nil, []byte("ad"), id, id))
	f.Add(krpc.AppendReply(nil, []byte{'i', 0, 0, 1}, krpc.Reply{ID: id, HasSamples: true, Samples: append(id, id...), Interval: 5, Num: 2,
		Nodes: []byte("abcdefghijklmnopqrst\x7f\x00\x00\x01\x1a\xe1")}, nil))
	f.Add(krpc.AppendError(nil, []byte{'i', 0, 0, 1}, 204, "Method Unknown"))
	f.Add([]byte("d1:t2:aa1:y1:qe"))
	n := fuzzNode(f)
	from := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &n.r.c
		before := c.malformed.Load() + c.responses.Load()
		for i := range c.queries {
			before += c.queries[i].Load()
		}
		// A crawler query is outstanding to "from", so responses reach deliver.
		n.r.crawler.mu.Lock()
		n.r.crawler.pending[1] = pending{addr: from, sent: time.Now(), kind: kindSample}
		n.r.crawler.mu.Unlock()
		n.handle(append([]byte(nil), b...), from, time.Now()) // it may cut a response's nodes in place
		after := c.malformed.Load() + c.responses.Load()
		for i := range c.queries {
			after += c.queries[i].Load()
		}
		// A malformed query is also counted by method: 1 or 2 per packet.
		if d := after - before; d < 1 || d > 2 {
			t.Fatalf("packet counted %d times: %q", d, b)
		}
		for _, o := range n.batch {
			if o.Source == "" || (o.NodeID != nil && len(o.NodeID) != 20) {
				t.Fatalf("bad observation %+v from %q", o, b)
			}
		}
		n.batch = n.batch[:0]
		for len(n.pipe.in) > 0 {
			<-n.pipe.in
		}
	})
}
