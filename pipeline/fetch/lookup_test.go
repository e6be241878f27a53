package fetch

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/torrent/bencode"
)

// startSlowNode runs a one-node DHT on loopback that answers get_peers
// with the peers values and the nodes nodes only after delay (other
// queries at once, with neither) and returns its address.
func startSlowNode(t *testing.T, delay time.Duration, peers []krpc.NodeAddr, nodes krpc.CompactIPv4NodeInfo) string {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var id krpc.ID
	copy(id[:], "slow-node-for-tests!")
	token := "tok"
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			var m krpc.Msg
			if bencode.Unmarshal(buf[:n], &m) != nil || m.Y != "q" {
				continue
			}
			reply := krpc.Msg{T: m.T, Y: "r", R: &krpc.Return{ID: id}}
			wait := time.Duration(0)
			if m.Q == "get_peers" {
				reply.R.Token, reply.R.Values, reply.R.Nodes = &token, peers, nodes
				wait = delay
			}
			b, err := bencode.Marshal(reply)
			if err != nil {
				t.Error(err)
				return
			}
			time.AfterFunc(wait, func() { _, _ = conn.WriteTo(b, from) })
		}
	}()
	return conn.LocalAddr().String()
}

// TestLookupWaitsDHTQueryTimeout: a node that answers later than the
// library's 2 s default is still heard when DHTQueryTimeout allows it.
// Under load (or -race) answers from a loopback testnet arrive that late;
// dropping them failed whole lookups.
func TestLookupWaitsDHTQueryTimeout(t *testing.T) {
	peer := krpc.NodeAddr{IP: net.IPv4(127, 0, 0, 1).To4(), Port: 6881}
	o := testOptions()
	o.Bootstrap = []string{startSlowNode(t, 2500*time.Millisecond, []krpc.NodeAddr{peer}, nil)}
	o.DHTQueryTimeout = time.Minute
	f := newFetcher(t, o)
	lr := f.dht.lookup(context.Background(), [20]byte{1, 2, 3})
	var got []string
	for {
		select {
		case addrs := <-lr.peers:
			got = append(got, addrs...)
			continue
		case <-lr.done:
		}
		break
	}
	if lr.err != nil || lr.responses != 1 || len(got) != 1 || got[0] != "127.0.0.1:6881" {
		t.Fatalf("lookup: err %v, %d responses, peers %v; want the slow node's answer", lr.err, lr.responses, got)
	}
}

func TestValidateDHTQueryTimeout(t *testing.T) {
	for _, tt := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Second, true}, {-time.Second, false}} {
		o := testOptions()
		o.DHTQueryTimeout = tt.d
		if err := o.Validate(); (err == nil) != tt.ok {
			t.Errorf("DHTQueryTimeout %v: Validate() = %v", tt.d, err)
		}
	}
}

func TestValidateConcurrencyAndListen(t *testing.T) {
	for _, tt := range []struct {
		concurrency int
		listen      string
		ok          bool
	}{
		{1, ":0", true}, {MaxConcurrency, "127.0.0.1:6881", true}, {8, "", true}, {8, "[::1]:0", true},
		{0, ":0", false}, {MaxConcurrency + 1, ":0", false}, {100000000, ":0", false},
		{8, "bogus", false}, {8, ":70000", false}, {8, "localhost:1", true}, {8, "127.0.0.1:x", false},
	} {
		o := testOptions()
		o.Concurrency, o.DHTListen = tt.concurrency, tt.listen
		if err := o.Validate(); (err == nil) != tt.ok {
			t.Errorf("concurrency %d, listen %q: Validate() = %v", tt.concurrency, tt.listen, err)
		}
	}
}
