package krpc

import (
	"bytes"
	"testing"
)

// BenchmarkParse decodes the packets capture reads most: queries, replies
// with nodes or BEP 51 samples, errors, and a reply whose unknown keys
// ("ip", "v", a nested value) Parse skips.
func BenchmarkParse(b *testing.B) {
	nodes := bytes.Repeat([]byte{7}, 8*26)
	samples := bytes.Repeat([]byte{9}, 20*20)
	tests := []struct {
		name   string
		packet []byte
	}{
		{"announce_peer", AppendAnnouncePeer(nil, []byte("t1"), id20, ih20, 51413, []byte("token123"))},
		{"find_node reply", AppendReply(nil, []byte("aa"), Reply{ID: id20, Nodes: nodes}, []byte{127, 0, 0, 1, 0x1a, 0xe1})},
		{"samples reply", AppendReply(nil, []byte("aa"), Reply{ID: id20, Nodes: nodes, HasSamples: true, Samples: samples, Num: 300, Interval: 21600}, nil)},
		{"error", AppendError(nil, []byte("e1"), 204, "Method Unknown")},
		{"unknown keys", []byte("d2:ip6:\x7f\x00\x00\x01\x1a\xe11:rd2:id20:abcdefghij01234567891:xld1:ai1e1:bl1:c1:deee5:nodes26:" +
			string(nodes[:26]) + "e1:t2:aa1:v4:LT011:y1:re")},
	}
	for _, tc := range tests {
		b.Run(tc.name, func(b *testing.B) {
			var m Msg
			if err := Parse(tc.packet, &m); err != nil {
				b.Fatalf("%q: %v", tc.packet, err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.packet)))
			for b.Loop() {
				if err := Parse(tc.packet, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
