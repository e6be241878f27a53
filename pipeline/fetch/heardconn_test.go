package fetch

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	ckrpc "github.com/infohash/infohash/formats/krpc"
)

// udpSocket is a UDP socket on 127.0.0.1, closed at the end of the test.
func udpSocket(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// receive has c read one datagram and returns its sender.
func receive(t *testing.T, c net.PacketConn) net.Addr {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(backstop)) // a datagram on loopback is not lost: only a hang ends this
	buf := make([]byte, 2048)
	_, from, err := c.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	return from
}

func send(t *testing.T, from net.PacketConn, b []byte, to net.Addr) {
	t.Helper()
	if _, err := from.WriteTo(b, to); err != nil {
		t.Fatal(err)
	}
}

func addrPort(a net.Addr) netip.AddrPort { return unmapped(a.(*net.UDPAddr).AddrPort()) }

// TestHeardConn: on loopback, a node counts as having answered only when
// a KRPC response comes from the address a query of ours went to, with
// that query's transaction ID; a datagram merely containing "1:y1:r" from
// anybody (which the socket used to count) does not.
func TestHeardConn(t *testing.T) {
	id := bytes.Repeat([]byte{1}, 20)
	reply := func(tid string) []byte { return ckrpc.AppendReply(nil, []byte(tid), ckrpc.Reply{ID: id}, nil) }
	tests := []struct {
		name     string
		query    bool   // we ping the node first, transaction "aa"
		answer   []byte // what the node sends back
		fromElse bool   // sent by another socket on the node's host
		want     bool
	}{
		{name: "answer to our query", query: true, answer: reply("aa"), want: true},
		{name: "response nobody asked for", answer: reply("aa")},
		{name: "another transaction", query: true, answer: reply("ab")},
		{name: "from another address", query: true, answer: reply("aa"), fromElse: true},
		{name: "a query with the reply tag in it", query: true,
			answer: ckrpc.AppendPing(nil, []byte("aa"), []byte("1:y1:r1:y1:r1:y1:r12")), want: false},
		{name: "the reply tag, not KRPC", query: true, answer: []byte("d1:t2:aa1:y1:re garbage")},
		{name: "an error reply", query: true, answer: ckrpc.AppendError(nil, []byte("aa"), 201, "no")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newHeardConn(udpSocket(t), onLoopback)
			node, other := udpSocket(t), udpSocket(t)
			if tt.query {
				send(t, c, ckrpc.AppendPing(nil, []byte("aa"), id), node.LocalAddr())
				receive(t, node)
			}
			from := node
			if tt.fromElse {
				from = other
			}
			send(t, from, tt.answer, c.LocalAddr())
			if got := receive(t, c); got.String() != from.LocalAddr().String() {
				t.Fatalf("read from %v, want %v", got, from.LocalAddr())
			}
			if got := c.answered(addrPort(from.LocalAddr())); got != tt.want {
				t.Fatalf("answered = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHeardConnBounded: whatever comes in, the socket keeps a bounded
// number of queries and answerers (here bounds of 4), forgetting the
// oldest first; unanswered queries also expire.
func TestHeardConnBounded(t *testing.T) {
	c := newHeardConn(udpSocket(t), onLoopback)
	c.asked.max, c.heard.max = 4, 4
	id := bytes.Repeat([]byte{1}, 20)
	var nodes []net.PacketConn
	for i := range 20 {
		node := udpSocket(t)
		nodes = append(nodes, node)
		tid := []byte{'t', byte(i)}
		send(t, c, ckrpc.AppendPing(nil, tid, id), node.LocalAddr())
		receive(t, node)
		send(t, node, ckrpc.AppendReply(nil, tid, ckrpc.Reply{ID: id}, nil), c.LocalAddr())
		receive(t, c)
		// A stranger's reply, and a query nobody answers.
		send(t, udpSocket(t), ckrpc.AppendReply(nil, tid, ckrpc.Reply{ID: id}, nil), c.LocalAddr())
		receive(t, c)
		send(t, c, ckrpc.AppendPing(nil, []byte{'u', byte(i)}, id), udpSocket(t).LocalAddr())
		if c.asked.len() > 8 || c.heard.len() > 8 {
			t.Fatalf("after %d nodes: %d queries, %d answerers kept", i+1, c.asked.len(), c.heard.len())
		}
	}
	if !c.answered(addrPort(nodes[19].LocalAddr())) || c.answered(addrPort(nodes[0].LocalAddr())) {
		t.Fatal("want the last answerer kept and the first forgotten")
	}

	// A query older than the TTL is forgotten once the next ones come.
	c = newHeardConn(udpSocket(t), onLoopback)
	now := time.Now()
	c.now = func() time.Time { return now }
	node := udpSocket(t)
	send(t, c, ckrpc.AppendPing(nil, []byte("aa"), id), node.LocalAddr())
	now = now.Add(3 * askedTTL)
	send(t, c, ckrpc.AppendPing(nil, []byte("ab"), id), node.LocalAddr())
	send(t, c, ckrpc.AppendPing(nil, []byte("ac"), id), node.LocalAddr())
	now = now.Add(3 * askedTTL)
	send(t, c, ckrpc.AppendPing(nil, []byte("ad"), id), node.LocalAddr())
	send(t, node, ckrpc.AppendReply(nil, []byte("aa"), ckrpc.Reply{ID: id}, nil), c.LocalAddr())
	receive(t, c)
	if c.answered(addrPort(node.LocalAddr())) {
		t.Fatal("an answer to a query sent 6 TTLs ago counted")
	}
	send(t, node, ckrpc.AppendReply(nil, []byte("ad"), ckrpc.Reply{ID: id}, nil), c.LocalAddr())
	receive(t, c)
	if !c.answered(addrPort(node.LocalAddr())) {
		t.Fatal("an answer to the last query did not count")
	}
}
