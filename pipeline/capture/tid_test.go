package capture

import (
	"net"
	"testing"
	"time"
)

// TestCrawlerTIDsAreUnpredictable: the walk's transaction IDs are drawn
// at random, not counted up. A response is taken as the queried node's
// when it comes from that address with an outstanding ID; with IDs in
// sequence, a node that saw one of our queries could forge replies (a
// forged UDP source) from the nodes it had just listed to us, with the
// next IDs, and have made-up samples recorded as theirs.
func TestCrawlerTIDsAreUnpredictable(t *testing.T) {
	n := fuzzNode(t)
	c := n.r.crawler
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	to := sink.LocalAddr().(*net.UDPAddr).AddrPort()
	const queries = 200
	for range queries {
		c.fresh = append(c.fresh, to) // the same sink: only the IDs matter
	}
	var keys []uint32
	for range queries {
		before := map[uint32]bool{}
		for k := range c.pending {
			before[k] = true
		}
		if !c.sendNext(time.Now()) {
			t.Fatal("nothing sent")
		}
		for k := range c.pending {
			if !before[k] {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) != queries || len(c.pending) != queries {
		t.Fatalf("%d new IDs, %d pending, want %d distinct", len(keys), len(c.pending), queries)
	}
	next := 0
	for i := 1; i < len(keys); i++ {
		if keys[i] == (keys[i-1]+1)&0xffffff {
			next++
		}
	}
	if next > 2 {
		t.Fatalf("%d of %d transaction IDs were the previous one plus 1", next, queries-1)
	}
}
