package capture

import (
	"context"
	"testing"
	"time"

	akrpc "github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/krpc"
)

// TestRepliesHaveNodesWhenTheTableIsEmpty: a node with nothing in its
// routing table still puts "nodes" (an empty string) in its find_node,
// get_peers and sample_infohashes replies, as BEP 5 (find_node; get_peers
// without values) and BEP 51 ask and libtorrent does; they had no "nodes"
// key at all. A ping reply has none. anacrolix's decoder takes the empty
// string as no nodes.
func TestRepliesHaveNodesWhenTheTableIsEmpty(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false // no bootstrap, no walk: the table stays empty
	addrs, wait := runAsync(t, ctx, o, &memSink{})
	defer func() { cancel(); wait() }()
	c := sendAll(t, addrs[0],
		krpc.AppendFindNode(nil, []byte("f1"), peerID, hashN(1)),
		krpc.AppendGetPeers(nil, []byte("g1"), peerID, hashN(2)),
		krpc.AppendSampleInfohashes(nil, []byte("s1"), peerID, hashN(3)),
		krpc.AppendPing(nil, []byte("p1"), peerID))
	want := map[string]bool{"f1": true, "g1": true, "s1": true, "p1": false} // t: has "nodes"
	buf := make([]byte, 1<<16)
	c.SetReadDeadline(time.Now().Add(hangGuard))
	for seen := 0; seen < len(want); {
		nb, err := c.Read(buf)
		if err != nil {
			t.Fatalf("after %d of %d replies: %v", seen, len(want), err)
		}
		var raw struct {
			T string         `bencode:"t"`
			Y string         `bencode:"y"`
			R map[string]any `bencode:"r"`
		}
		if err := bencode.Unmarshal(buf[:nb], &raw); err != nil {
			t.Fatalf("reply %q: %v", buf[:nb], err)
		}
		if raw.Y == "q" {
			continue // the library's own query, not a reply
		}
		seen++
		wantNodes, ok := want[raw.T]
		if !ok || raw.Y != "r" {
			t.Fatalf("unexpected reply %q", buf[:nb])
		}
		nodes, has := raw.R["nodes"]
		switch {
		case has != wantNodes:
			t.Errorf("reply %s: has nodes %v, want %v: %q", raw.T, has, wantNodes, buf[:nb])
		case has && nodes != "":
			t.Errorf("reply %s: nodes %q, want empty (the table is empty)", raw.T, nodes)
		}
		var m akrpc.Msg
		if err := bencode.Unmarshal(buf[:nb], &m); err != nil || m.R == nil || len(m.R.Nodes) != 0 {
			t.Errorf("reply %s: anacrolix reads %+v, %v; want a reply without nodes", raw.T, m.R, err)
		}
	}
}
