package capture

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/formats/krpc"
	"github.com/infohash/infohash/formats/schema"
)

// TestAnnouncePeerPort sends announce_peer queries with each combination
// of port and implied_port to a node on loopback and checks the reply and
// the peer_port recorded (0 is null).
func TestAnnouncePeerPort(t *testing.T) {
	const sourcePort = -1 // want: the sender's UDP source port
	const notRecorded = -2
	tests := []struct {
		name    string
		port    *int64
		implied *int64
		reply   byte
		want    int32
	}{
		{name: "port", port: ptr(51413), reply: krpc.Response, want: 51413},
		{name: "implied_port=1 overrides port", port: ptr(1), implied: ptr(1), reply: krpc.Response, want: sourcePort},
		{name: "implied_port=1 alone", implied: ptr(1), reply: krpc.Response, want: sourcePort},
		{name: "implied_port=0 and port", port: ptr(6881), implied: ptr(0), reply: krpc.Response, want: 6881},
		{name: "neither port nor implied_port", reply: krpc.Response, want: 0},
		{name: "implied_port=0 alone", implied: ptr(0), reply: krpc.Response, want: 0},
		{name: "port 0", port: ptr(0), reply: krpc.Error, want: notRecorded},
		{name: "port too large", port: ptr(65536), reply: krpc.Error, want: notRecorded},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	sink := &memSink{}
	addrs, wait := runAsync(t, ctx, o, sink)
	c := sendAll(t, addrs[0], krpc.AppendGetPeers(nil, []byte("g"), peerID, hashN(0)))
	tok := append([]byte(nil), replies(t, c, 1)[0].Token...)
	for i, tt := range tests {
		// Keys in bencode order: id, implied_port, info_hash, port, token.
		q := krpc.AppendQuery(nil, []byte(fmt.Sprint(i)), "announce_peer", func(e *bencode.Encoder) {
			e.Str("id").Bytes(peerID)
			if tt.implied != nil {
				e.Str("implied_port").Int(*tt.implied)
			}
			e.Str("info_hash").Bytes(hashN(100 + i))
			if tt.port != nil {
				e.Str("port").Int(*tt.port)
			}
			e.Str("token").Bytes(tok)
		})
		if _, err := c.Write(q); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]byte{}
	for _, m := range replies(t, c, len(tests)) {
		got[string(m.T)] = m.Y
	}
	cancel()
	if _, err := wait(); err == nil {
		t.Fatal("Run returned nil after cancel, want the interruption")
	}
	ports := map[string]int32{}
	for _, r := range sink.rows {
		if r.Source == schema.SourceAnnouncePeer {
			ports[string(r.InfoHash[:])] = r.PeerPort
		}
	}
	local := int32(c.LocalAddr().(*net.UDPAddr).Port)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if y := got[fmt.Sprint(i)]; y != tt.reply {
				t.Errorf("reply type %q, want %q", y, tt.reply)
			}
			port, ok := ports[string(hashN(100+i))]
			switch want := tt.want; {
			case want == notRecorded:
				if ok {
					t.Errorf("recorded with peer_port %d, want no observation", port)
				}
			case !ok:
				t.Errorf("not recorded, want an observation")
			case want == sourcePort && port != local:
				t.Errorf("peer_port %d, want the source port %d", port, local)
			case want >= 0 && port != want:
				t.Errorf("peer_port %d, want %d", port, want)
			}
		})
	}
}

// TestInvalidArgumentsGetError203: a query whose arguments do not decode
// (a 19-byte info_hash, a port that is a string) is answered with error
// 203 and its transaction ID (BEP 5: "invalid arguments"), counted as
// malformed and not recorded; it used to get no reply at all, so the
// sender waited for its timeout. A packet that is no query gets none.
func TestInvalidArgumentsGetError203(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := testOptions()
	o.Crawl = false
	sink := &memSink{}
	addrs, wait := runAsync(t, ctx, o, sink)
	c := sendAll(t, addrs[0],
		[]byte("d1:ad2:id20:abcdefghij01234567899:info_hash19:abcdefghij012345678e1:q9:get_peers1:t2:g11:y1:qe"),
		[]byte("d1:ad2:id20:abcdefghij01234567899:info_hash20:abcdefghij01234567894:port2:805:token8:12345678e1:q13:announce_peer1:t2:a11:y1:qe"),
		[]byte("d1:rd2:id3:abce1:t2:r11:y1:re"), // a response: no reply
		krpc.AppendPing(nil, []byte("p1"), peerID))
	got := replies(t, c, 3)
	cancel()
	st, _ := wait()
	for i, want := range []string{"g1", "a1"} {
		if m := got[i]; string(m.T) != want || m.Y != krpc.Error || m.ErrCode != krpc.ErrProtocol {
			t.Errorf("reply %d: %+v, want error 203 with t %q", i, m, want)
		}
	}
	if m := got[2]; string(m.T) != "p1" || m.Y != krpc.Response {
		t.Errorf("reply 2: %+v, want the ping's", m)
	}
	if st.Malformed != 3 || len(sink.rows) != 0 {
		t.Errorf("malformed %d, %d observations; want 3, 0", st.Malformed, len(sink.rows))
	}
}
