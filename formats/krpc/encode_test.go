package krpc

import (
	"bytes"
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/infohash/infohash/formats/bencode"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestEncodeGolden compares every message the encoders write with
// testdata/encode.golden, one "name quoted-bytes" line each, so that a
// change to the encoders cannot change a byte on the wire unnoticed
// (go test -run TestEncodeGolden -update rewrites the file).
func TestEncodeGolden(t *testing.T) {
	nodes := bytes.Repeat([]byte{7}, 26)
	samples := append(append([]byte{}, ih20...), id20...)
	ip := []byte{127, 0, 0, 1, 0x1a, 0xe1}
	msgs := []struct {
		name string
		b    []byte
	}{
		{"get_peers", AppendGetPeers(nil, []byte("aa"), id20, ih20)},
		{"announce_peer", AppendAnnouncePeer(nil, []byte("t1"), id20, ih20, 51413, []byte("tok"))},
		{"announce_peer_port_0", AppendAnnouncePeer(nil, []byte("t1"), id20, ih20, 0, nil)},
		{"sample_infohashes", AppendSampleInfohashes(nil, []byte("zz"), id20, ih20)},
		{"find_node", AppendFindNode(nil, []byte("\x00\xff"), id20, ih20)},
		{"ping", AppendPing(nil, []byte("p"), id20)},
		{"query_nested_args", AppendQuery(nil, []byte("q1"), "vote", func(e *bencode.Encoder) {
			e.Str("id").Bytes(id20).Str("list").List().Int(-3).Str("").Dict().Str("k").Int(0).End().End()
		})},
		{"reply_minimal", AppendReply(nil, []byte("r1"), Reply{ID: id20}, nil)},
		{"reply_full", AppendReply(nil, []byte("r2"), Reply{ID: id20, Interval: 21600, Nodes: nodes, Num: 1 << 40,
			HasSamples: true, Samples: samples, Token: []byte("tok")}, ip)},
		{"reply_values", AppendReply(nil, []byte("r4"), Reply{ID: id20, Nodes: nodes, Token: []byte("tok"),
			Values: []byte{127, 0, 0, 1, 0x1a, 0xe1, 10, 0, 0, 2, 0xc8, 0xd5}}, ip)},
		{"reply_empty_nodes", AppendReply(nil, []byte("r5"), Reply{ID: id20, HasNodes: true}, ip)},
		{"reply_empty_samples", AppendReply(nil, []byte("r3"), Reply{ID: id20, HasSamples: true}, ip[:4])},
		{"error", AppendError(nil, []byte("e1"), ErrMethodUnknown, "Method Unknown")},
		{"error_generic", AppendError(nil, []byte("e2"), ErrGeneric, "")},
		{"appended_to_prefix", AppendPing([]byte("prefix:"), []byte("p"), id20)},
	}
	var got []byte
	for _, m := range msgs {
		got = fmt.Appendf(got, "%s %s\n", m.name, strconv.Quote(string(m.b)))
	}
	const golden = "testdata/encode.golden"
	goldentest.Check(t, golden, got, *update)
}
