package capture

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/reach"
)

// TestCrawlerFanOutIsBounded: what one node's replies can make the walk
// query is bounded. A reply listing 100 nodes used to queue all 100 (one
// 64 KB datagram can list 2,500: a node that answers with a victim's
// addresses turns the crawler into a flood of queries at them), and
// replies listing 100 ports of one address queued all of them. Now a
// reply gives at most maxContactsPerReply contacts and a public address
// at most maxPortsPerIP ports; a loopback testnet the run was pointed at
// (every node on 127.0.0.1) is not bounded per address.
func TestCrawlerFanOutIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		reach   reach.Rule
		replies int
		contact func(reply, i int) string
		want    int
	}{
		{name: "100 public addresses in one reply", replies: 1, want: 16,
			contact: func(_, i int) string { return fmt.Sprintf("198.51.%d.%d:6881", i/200, 1+i%200) }},
		{name: "100 ports of one address over 10 replies", replies: 10, want: 8,
			contact: func(r, i int) string { return fmt.Sprintf("198.51.100.9:%d", 1000+r*10+i%10) }},
		{name: "100 loopback ports over 10 replies, pointed at loopback", reach: reach.Rule{Loopback: true}, replies: 10, want: 100,
			contact: func(r, i int) string { return fmt.Sprintf("127.0.0.1:%d", 1000+r*10+i%10) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := fuzzNode(t)
			n.r.reach = tt.reach
			c := n.r.crawler
			per := 100 / tt.replies
			for r := range tt.replies {
				from := netip.AddrPortFrom(netip.MustParseAddr("203.0.113.5"), uint16(2000+r))
				var addrs []string
				for i := range per {
					addrs = append(addrs, tt.contact(r, i))
				}
				key := uint32(100 + r)
				c.pending[key] = pending{addr: from, sent: time.Now(), kind: kindSample}
				n.handle(krpc.AppendReply(nil, []byte{'i', 0, 0, byte(key)}, krpc.Reply{ID: []byte("remote-node-id-01234"),
					HasSamples: true, Nodes: compactNodes(addrs...), Interval: 60}, nil), from, time.Now())
			}
			if len(c.fresh) != tt.want {
				t.Fatalf("%d contacts queued for the walk, want %d", len(c.fresh), tt.want)
			}
		})
	}
}
