package capture

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/internal/reach"
)

func TestReplyLimiter(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type step struct {
		name string
		addr string
		at   time.Duration
		want int // of 1000 replies
	}
	for _, run := range []struct {
		name  string
		reach reach.Rule
		steps []step
	}{
		{"a run on the Internet", reach.Rule{}, []step{
			{"a flood at a public address: the burst", "198.51.100.7", 0, replyBurst},
			{"the same address 500 ms later: 10 more", "198.51.100.7", 500 * time.Millisecond, replyRate / 2},
			{"another public address, another slot: its own burst", "8.8.8.8", 500 * time.Millisecond, replyBurst},
			{"loopback: not limited", "127.0.0.1", 500 * time.Millisecond, 1000},
			{"private (may be forged): the burst", "192.168.1.5", 500 * time.Millisecond, replyBurst},
			{"carrier-grade NAT (may be forged): the burst", "100.64.0.9", 500 * time.Millisecond, replyBurst},
			{"the first address after a quiet minute: the burst again", "198.51.100.7", time.Minute, replyBurst},
			{"a clock stepped back: no tokens made", "198.51.100.7", 0, 0},
		}},
		{"a run pointed into a private range", reach.Rule{Private: true}, []step{
			{"private: not limited", "192.168.1.5", 0, 1000},
			{"public: the burst", "198.51.100.7", 0, replyBurst},
		}},
	} {
		l := newReplyLimiter(run.reach)
		l.key = 1 // slot = the address's top 13 bits
		for _, s := range run.steps {
			ok := 0
			for range 1000 {
				if l.allow(netip.MustParseAddr(s.addr), t0.Add(s.at)) {
					ok++
				}
			}
			if ok != s.want {
				t.Errorf("%s: %s: %d of 1000 replies allowed, want %d", run.name, s.name, ok, s.want)
			}
		}
	}
}

// TestRepliesAreBoundedPerAddress: a run reads and records every query
// of a flood from one address but answers only its share (it answered
// them all: a reflector for floods with a forged source), over all its
// nodes: a flood sent to each of K nodes' ports got K times the share
// when each node had its own limiter. The limiter is made to limit
// loopback here, which it leaves alone in a run.
func TestRepliesAreBoundedPerAddress(t *testing.T) {
	for _, nodes := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d nodes", nodes), func(t *testing.T) {
			ns := []*node{fuzzNode(t)}
			for range nodes - 1 {
				ns = append(ns, siblingNode(t, ns[0]))
			}
			ns[0].r.replies.limit = func(netip.Addr) bool { return true }
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadBuffer(4 << 20) // room for a broken limiter's flood: its marker is not dropped
			from := c.LocalAddr().(*net.UDPAddr).AddrPort()
			now := time.Now()
			const flood = 100
			recorded := 0
			for _, n := range ns {
				for i := range flood {
					n.handle(krpc.AppendGetPeers(nil, []byte(fmt.Sprint(i)), peerID, hashN(i)), from, now)
				}
				recorded += len(n.batch)
			}
			// Each node's socket sends a marker after its replies; loopback
			// keeps a socket's order, so the replies are all in once every
			// marker is, with no window of silence to wait out (300 ms was
			// one).
			marker := []byte("marker")
			for _, n := range ns {
				if _, err := n.sock.WriteToUDPAddrPort(marker, from); err != nil {
					t.Fatal(err)
				}
			}
			got, markers := 0, 0
			buf := make([]byte, 1500)
			c.SetReadDeadline(time.Now().Add(hangGuard))
			for markers < len(ns) {
				nb, err := c.Read(buf)
				if err != nil {
					t.Fatalf("after %d replies and %d of %d markers: %v", got, markers, len(ns), err)
				}
				if string(buf[:nb]) == string(marker) {
					markers++
				} else {
					got++
				}
			}
			st := ns[0].r.c.stats()
			all := nodes * flood
			if got != replyBurst || st.RepliesLimited != int64(all-replyBurst) || recorded != all {
				t.Fatalf("%d replies, replies_limited %d, %d observations; want %d, %d, %d",
					got, st.RepliesLimited, recorded, replyBurst, all-replyBurst, all)
			}
		})
	}
}

// siblingNode is another node of n's run, on a socket of its own.
func siblingNode(t *testing.T, n *node) *node {
	t.Helper()
	sib := fuzzNode(t)
	sib.r = n.r
	sib.id[0] = byte(7 + len(n.r.crawler.nodes))
	n.r.crawler.nodes = append(n.r.crawler.nodes, sib)
	return sib
}
