package capture

import (
	"crypto/rand"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/reach"
)

// libraryNode is a node with its anacrolix server started (no bootstrap)
// but no read loop: the test drives handle, and every query it handles
// is forwarded to the library (no rate limit on forwarding).
func libraryNode(t *testing.T) *node {
	t.Helper()
	o, _ := checkOptions(testOptions())
	o.BatchSize = 1 << 30
	r := &runner{opts: o, tokens: newTokens(time.Now()), replies: newReplyLimiter(reach.Rule{Loopback: true}),
		libSend: rate.NewLimiter(rate.Inf, 0), reach: reach.Rule{Loopback: true}, batches: make(chan []schema.Observation, 1)}
	nodes, err := openNodes(r, "127.0.0.1:0", [][20]byte{{7}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := nodes[0]
	t.Cleanup(func() { closeNodes(nodes) })
	if err := n.startLibrary(nil, nil); err != nil {
		t.Fatal(err)
	}
	n.fwd = rate.NewLimiter(rate.Inf, 0)
	return n
}

// libraryHas waits until the library's table holds a node with id (the
// packets forwarded before its query have been processed: the library
// reads them in order), and returns how many entries the table has at
// each address.
func libraryHas(t *testing.T, n *node, id [20]byte) map[string]int {
	t.Helper()
	var at map[string]int
	waitFor(t, "the library to learn of the last sender", func() bool {
		at = map[string]int{}
		found := false
		for _, ni := range n.srv.Nodes() {
			at[ni.Addr.String()]++
			found = found || ni.ID == id
		}
		return found
	})
	return at
}

// TestLibraryTableOneIDPerSender: a sender whose queries carry a new node
// ID each (a forged flood, or a node that changes its ID per packet)
// takes one entry of the library's routing table, under the ID it was
// first forwarded with, not one per ID: the library keys its table by
// (address, ID), and 3,000 pings from one socket with random IDs filled
// it (65 entries, all that one address: the table the state saves, the
// walk starts from and refreshes ping).
func TestLibraryTableOneIDPerSender(t *testing.T) {
	for _, tc := range []struct {
		name    string
		queries func(i int, id []byte) []byte
		want    int // entries of the flooding address
	}{
		{"a new ID per ping", func(i int, id []byte) []byte { return krpc.AppendPing(nil, []byte{byte(i), byte(i >> 8)}, id) }, 1},
		{"a new ID per get_peers", func(i int, id []byte) []byte {
			return krpc.AppendGetPeers(nil, []byte{byte(i), byte(i >> 8)}, id, hashN(i))
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := libraryNode(t)
			flood := netip.MustParseAddrPort("127.0.0.1:9")
			first := make([]byte, 20)
			for i := range 600 {
				id := make([]byte, 20)
				rand.Read(id)
				if i == 0 {
					copy(first, id)
				}
				n.handle(tc.queries(i, id), flood, time.Now())
				if len(n.pipe.in) > pipeSlots/2 { // the library's queue: not to drop any
					waitFor(t, "the library to read its queue", func() bool { return len(n.pipe.in) < pipeSlots/4 })
				}
			}
			// Next to the node's own ID {7}: a bucket no random ID reaches.
			last := [20]byte{7, 19: 1}
			n.handle(krpc.AppendPing(nil, []byte("zz"), last[:]), netip.MustParseAddrPort("127.0.0.1:10"), time.Now())
			at := libraryHas(t, n, last)
			if got := at[flood.String()]; got != tc.want {
				t.Fatalf("the library's table holds %d entries at %s, want %d", got, flood, tc.want)
			}
			for _, ni := range n.srv.Nodes() {
				if ni.Addr.String() == flood.String() && string(ni.ID[:]) != string(first) {
					t.Errorf("%s is in the table under %x, not the ID it first sent", flood, ni.ID)
				}
			}
		})
	}
}
