package krpc

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// reply is a response with n nodes, a token and values, its keys in the
// order given by nodesFirst.
func reply(n int, nodesFirst bool) []byte {
	nodes := "5:nodes" + strconv.Itoa(n*26) + ":" + strings.Repeat("N", n*26)
	rest := "5:token4:tok16:valuesl6:\x7f\x00\x00\x01\x1a\xe1e"
	body := "2:id20:abcdefghij0123456789" + rest + nodes
	if nodesFirst {
		body = "2:id20:abcdefghij0123456789" + nodes + rest
	}
	return []byte("d1:rd" + body + "e1:t2:aa1:y1:re")
}

// TestTrimNodes: a response's nodes are cut to the first max, the rest
// of the packet kept as it was (it parses, and its other fields are the
// same); a packet with max or fewer comes back untouched.
func TestTrimNodes(t *testing.T) {
	tests := []struct {
		name   string
		packet []byte
		max    int
		want   int // nodes left
	}{
		{"nodes last, 100 to 16", reply(100, false), 16, 16},
		{"nodes before other keys, 100 to 16", reply(100, true), 16, 16},
		{"length loses digits", reply(385, true), 3, 3}, // 10010 bytes to 78
		{"to none", reply(5, true), 0, 0},
		{"as many as max", reply(16, true), 16, 16},
		{"fewer than max", reply(2, false), 16, 2},
		{"no nodes", []byte("d1:rd2:id20:abcdefghij0123456789e1:t2:aa1:y1:re"), 16, 0},
		{"nodes in a query's arguments are not r's", []byte("d1:ad2:id20:abcdefghij01234567895:nodes52:" +
			strings.Repeat("N", 52) + "e1:q4:ping1:t2:aa1:y1:qe"), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after Msg
			orig := bytes.Clone(tt.packet)
			if err := Parse(tt.packet, &before); err != nil {
				t.Fatal(err)
			}
			nodes := bytes.Clone(before.Nodes)
			out := TrimNodes(tt.packet, &before, tt.max)
			if len(nodes) <= tt.max*26 && !bytes.Equal(out, orig) {
				t.Fatalf("packet changed to %q, want it as it was", out)
			}
			if err := Parse(out, &after); err != nil {
				t.Fatalf("trimmed packet %q: %v", out, err)
			}
			if len(after.Nodes) != tt.want*26 || !bytes.Equal(after.Nodes, nodes[:tt.want*26]) || !bytes.Equal(before.Nodes, after.Nodes) {
				t.Fatalf("%d bytes of nodes left (%d reported), want the first %d", len(after.Nodes), len(before.Nodes), tt.want*26)
			}
			var was Msg
			_ = Parse(orig, &was)
			if string(after.T) != string(was.T) || string(after.ID) != string(was.ID) || string(after.Token) != string(was.Token) || after.Y != was.Y {
				t.Fatalf("other fields changed: %+v, was %+v", after, was)
			}
			if !bytes.Contains(out, []byte("6:valuesl6:\x7f\x00\x00\x01\x1a\xe1e")) && bytes.Contains(orig, []byte("6:values")) {
				t.Fatalf("values lost: %q", out)
			}
		})
	}
}

// FuzzTrimNodes: whatever packet Parse accepts, trimming its nodes leaves
// one it accepts, with the first nodes and every other field unchanged.
func FuzzTrimNodes(f *testing.F) {
	f.Add(reply(3, true), uint8(1))
	f.Add(reply(20, false), uint8(16))
	f.Add([]byte("d1:rd5:nodes26:"+strings.Repeat("x", 26)+"5:nodes52:"+strings.Repeat("y", 52)+"e1:t1:a1:y1:re"), uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, max uint8) {
		var m, again, was Msg
		if Parse(b, &m) != nil {
			return
		}
		orig := bytes.Clone(b)
		nodes := bytes.Clone(m.Nodes)
		out := TrimNodes(b, &m, int(max))
		if err := Parse(out, &again); err != nil {
			t.Fatalf("%q trimmed to %q: %v", orig, out, err)
		}
		keep := min(len(nodes), int(max)*26)
		if !bytes.Equal(again.Nodes, nodes[:keep]) {
			t.Fatalf("%q trimmed to %q: nodes %q, want %q", orig, out, again.Nodes, nodes[:keep])
		}
		_ = Parse(orig, &was)
		if string(again.T) != string(was.T) || string(again.ID) != string(was.ID) || string(again.Token) != string(was.Token) ||
			string(again.Samples) != string(was.Samples) || again.Y != was.Y || string(again.Q) != string(was.Q) || again.Port != was.Port {
			t.Fatalf("%q trimmed to %q: other fields changed", orig, out)
		}
	})
}

// TestReplaceT: a packet's transaction ID is replaced wherever "t" comes
// among its keys and whatever the lengths, the rest kept as it was (it
// parses, its other fields the same), and the packet given is untouched.
func TestReplaceT(t *testing.T) {
	tests := []struct {
		name   string
		packet string
		t      string
	}{
		{"a query, one byte to four", "d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t1:\x011:y1:qe", "lAbC"},
		{"a response, t before r", "d1:t2:aa1:y1:r1:rd2:id20:abcdefghij01234567895:nodes26:" + strings.Repeat("N", 26) + "ee", "lxyz"},
		{"t first, four bytes to two", "d1:t4:lxyz1:rd2:id20:abcdefghij0123456789e1:y1:re", "\x81\x01"},
		{"a length that gains a digit", "d1:rd2:id20:abcdefghij0123456789e1:t9:123456789" + "1:y1:re", "0123456789"},
		{"an error", "d1:eli204e14:Method Unknowne1:t4:lxyz1:y1:ee", "\x05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.packet)
			var before, after Msg
			if err := Parse(b, &before); err != nil {
				t.Fatal(err)
			}
			out := ReplaceT(b, &before, []byte(tt.t))
			if string(b) != tt.packet {
				t.Fatalf("the packet given changed: %q", b)
			}
			if err := Parse(out, &after); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			if string(after.T) != tt.t {
				t.Errorf("t = %q, want %q", after.T, tt.t)
			}
			if after.Y != before.Y || string(after.ID) != string(before.ID) || string(after.Nodes) != string(before.Nodes) ||
				after.ErrCode != before.ErrCode || string(after.Q) != string(before.Q) {
				t.Errorf("fields changed: %+v, was %+v", after, before)
			}
			if back := ReplaceT(out, &after, before.T); string(back) != tt.packet {
				t.Errorf("t replaced back gives %q, want %q", back, tt.packet)
			}
		})
	}
}
