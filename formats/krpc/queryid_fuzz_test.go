package krpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"
)

// FuzzQueryID checks QueryID, which capture calls on every packet Parse
// rejects (for an error 203 reply), on arbitrary bytes: it never panics;
// a query Parse accepts yields Parse's transaction ID, a response or
// error Parse accepts none; an ID it returns lies within the packet and,
// where anacrolix's decoder reads the packet (keys sorted), is its "t" of
// a message whose "y" is "q".
func FuzzQueryID(f *testing.F) {
	f.Add(AppendGetPeers(nil, []byte("aa"), id20, ih20))
	f.Add(AppendAnnouncePeer(nil, []byte("tx"), id20, ih20, 1, []byte("x")))
	f.Add(AppendReply(nil, []byte("aa"), Reply{ID: id20, Nodes: bytes.Repeat([]byte{2}, 26)}, nil))
	f.Add(AppendError(nil, []byte("aa"), 204, "x"))
	for _, p := range []string{
		"d1:t2:aa1:y1:qe",                        // no method
		"d1:ad2:id3:abce1:q4:ping1:t2:aa1:y1:qe", // a short ID
		"d1:ad4:port2:80e1:q4:ping1:t2:aa1:y1:qe",
		"d1:t2:aa1:y1:q1:t2:bb1:y1:qe", // keys twice: the last counts, as for Parse
		"d1:y1:q1:t0:e",                // an empty ID
		"d1:t2:aa1:y1:qei1e",           // trailing bytes
	} {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tid, ok := QueryID(b)
		var m Msg
		perr := Parse(b, &m)
		switch {
		case perr == nil && m.Y == Query && (!ok || !bytes.Equal(tid, m.T)):
			t.Fatalf("Parse reads a query with ID %q; QueryID = %q, %v", m.T, tid, ok)
		case perr == nil && m.Y != Query && ok:
			t.Fatalf("Parse reads a %q message; QueryID = %q, %v", m.Y, tid, ok)
		case perr != nil && !IsMalformed(perr):
			t.Fatalf("Parse: non-syntax error %v", perr)
		}
		if !ok {
			return
		}
		if tid == nil || len(tid) >= len(b) || !bytes.Contains(b, tid) {
			t.Fatalf("QueryID(%q) = %q: not a string of the packet", b, tid)
		}
		var v map[string]any
		if err := bencode.Unmarshal(b, &v); err != nil {
			if !strings.Contains(err.Error(), "unsorted") && !strings.Contains(err.Error(), "duplicate") {
				t.Logf("anacrolix: %v", err) // beyond its decoder (QueryID skips what Parse would check)
			}
			return
		}
		if s, _ := v["t"].(string); v["y"] != "q" || s != string(tid) {
			t.Fatalf("QueryID(%q) = %q; anacrolix reads t %q, y %q", b, tid, v["t"], v["y"])
		}
	})
}
