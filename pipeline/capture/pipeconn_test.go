package capture

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/krpc"
)

// bigResponse is a valid KRPC response of about size bytes (padded out
// with a key nobody reads: a long "nodes" would be cut) whose transaction
// ID is not the walk's, so that a node passes it to its library.
func bigResponse(t []byte, size int) []byte {
	var e bencode.Encoder
	e.Dict().Str("r").Dict().Str("id").Bytes([]byte("remote-node-id-01234")).
		Str("pad").Bytes(bytes.Repeat([]byte{9}, size)).End().
		Str("t").Bytes(t).Str("y").Str("r").End()
	return e.B
}

// nodesResponse is a valid KRPC response listing n nodes, for the library
// (its transaction ID is not the walk's).
func nodesResponse(t []byte, n int) []byte {
	var e bencode.Encoder
	e.Dict().Str("r").Dict().Str("id").Bytes([]byte("remote-node-id-01234")).
		Str("nodes").Bytes(bytes.Repeat([]byte{9}, n*26)).Str("token").Str("tok1").End().
		Str("t").Bytes(t).Str("y").Str("r").End()
	return e.B
}

// TestLibraryQueueBoundedByBytes: big datagrams sent over loopback to a
// node whose library does not read fill its queue only up to pipeBytes
// (1,024 of them used to be kept, up to 64 MB), and those it had no room
// for are counted as library_dropped; reading the queue gives back what
// it held, byte for byte.
func TestLibraryQueueBoundedByBytes(t *testing.T) {
	n := fuzzNode(t) // no library: nothing reads n.pipe
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); n.serve(stop) }()
	defer func() { close(stop); <-done }()
	src, err := net.DialUDP("udp4", nil, n.sock.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const sent = 100
	pkt := bigResponse([]byte("xx"), 60_000) // as the library reads it
	for i := range sent {
		// An answer to a query of the library's (its ID "xx"), with the
		// ID the query carried on the wire.
		wire, _ := n.pipe.asks.sent(src.LocalAddr().(*net.UDPAddr).AddrPort(), []byte("xx"), time.Now())
		if _, err := src.Write(bigResponse(wire, 60_000)); err != nil {
			t.Fatal(err)
		}
		// One at a time: a socket buffer smaller than the burst would
		// lose some before the node reads them.
		waitFor(t, "the node to read the datagram", func() bool { return n.r.c.responses.Load() == int64(i+1) })
	}
	st := n.r.c.stats()
	held := int64(len(n.pipe.in))
	if fit := int64(pipeBytes / len(pkt)); held != fit || st.LibraryDropped != sent-fit {
		t.Fatalf("queue holds %d packets (%d bytes), library_dropped %d; want %d held (%d bytes at most) and %d dropped",
			held, n.pipe.queued.Load(), st.LibraryDropped, fit, pipeBytes, sent-fit)
	}
	if q := n.pipe.queued.Load(); q != held*int64(len(pkt)) {
		t.Fatalf("queued %d bytes, want %d", q, held*int64(len(pkt)))
	}
	buf := make([]byte, 1<<16)
	for range held {
		nb, from, err := n.pipe.ReadFrom(buf)
		if err != nil || !bytes.Equal(buf[:nb], pkt) || from.(*net.UDPAddr).AddrPort() != src.LocalAddr().(*net.UDPAddr).AddrPort() {
			t.Fatalf("ReadFrom: %d bytes from %v, %v; want the datagram as sent", nb, from, err)
		}
	}
	if q := n.pipe.queued.Load(); q != 0 {
		t.Fatalf("queued %d bytes after reading everything, want 0", q)
	}
	// Room again: a datagram of a usual size goes through.
	if !n.pipe.push(bigResponse([]byte("yy"), 300), netip.MustParseAddrPort("127.0.0.1:9")) {
		t.Fatal("push refused with the queue empty")
	}
}

// TestLibraryQueueSmallPackets: packets of an MTU's size are bounded by
// the slot count, as before, not by pipeBytes.
func TestLibraryQueueSmallPackets(t *testing.T) {
	p := newPipeConn(nil)
	pkt := bytes.Repeat([]byte{1}, 1500)
	from := netip.MustParseAddrPort("127.0.0.1:9")
	for i := range pipeSlots {
		if !p.push(pkt, from) {
			t.Fatalf("push %d of %d refused", i+1, pipeSlots)
		}
	}
	if p.push(pkt, from) {
		t.Fatal("push past the slot count taken")
	}
	if q := p.queued.Load(); q != pipeSlots*1500 {
		t.Fatalf("queued %d bytes, want %d", q, pipeSlots*1500)
	}
}

// TestLibraryGetsTheFirstNodes: a response for the library that lists
// nodes by the hundred reaches it with the first maxContactsPerReply of
// them and everything else as sent. Its traversals (bootstrap, refresh)
// used to query every one: a liar's reply named 2,500 addresses to send
// find_node to.
func TestLibraryGetsTheFirstNodes(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		want  int
	}{
		{"hundreds", 400, maxContactsPerReply},
		{"just over", maxContactsPerReply + 1, maxContactsPerReply},
		{"K", 8, 8},
	}
	n := fuzzNode(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); n.serve(stop) }()
	defer func() { close(stop); <-done }()
	src, err := net.DialUDP("udp4", nil, n.sock.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	buf := make([]byte, 1<<16)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An answer to a query of the library's (its ID "lb"), with the
			// ID the query carried on the wire.
			wire, _ := n.pipe.asks.sent(src.LocalAddr().(*net.UDPAddr).AddrPort(), []byte("lb"), time.Now())
			sent := nodesResponse(wire, tt.nodes)
			var was krpc.Msg
			if err := krpc.Parse(sent, &was); err != nil || len(was.Nodes) != tt.nodes*26 {
				t.Fatalf("test packet: %d bytes of nodes, %v", len(was.Nodes), err)
			}
			in := n.r.c.responses.Load()
			if _, err := src.Write(sent); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the node to read the datagram", func() bool { return n.r.c.responses.Load() == in+1 })
			nb, _, err := n.pipe.ReadFrom(buf)
			var got krpc.Msg
			if err != nil || krpc.Parse(buf[:nb], &got) != nil {
				t.Fatalf("the library read %q (%v): not a KRPC message", buf[:nb], err)
			}
			if len(got.Nodes) != tt.want*26 || string(got.T) != "lb" || string(got.ID) != string(was.ID) || string(got.Token) != "tok1" {
				t.Fatalf("the library got %d nodes, t %q, id %q, token %q; want %d, %q, %q, %q",
					len(got.Nodes)/26, got.T, got.ID, got.Token, tt.want, "lb", was.ID, "tok1")
			}
		})
	}
}
