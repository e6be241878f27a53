package krpc

import (
	"strings"
	"testing"
)

// TestQueryID: a query Parse rejects for its arguments still yields its
// transaction ID (for an error 203 reply); a packet that is not a query,
// has no ID or breaks the decoder's limits does not.
func TestQueryID(t *testing.T) {
	deep := strings.Repeat("l", 50) + strings.Repeat("e", 50)
	tests := []struct {
		name, packet string
		ok           bool
	}{
		{"query no method", "d1:t2:aa1:y1:qe", true},
		{"short id", "d1:ad2:id3:abce1:q4:ping1:t2:aa1:y1:qe", true},
		{"short info_hash", "d1:ad2:id20:abcdefghij01234567899:info_hash19:abcdefghij012345678e1:q9:get_peers1:t2:aa1:y1:qe", true},
		{"port not an integer", "d1:ad4:port2:80e1:q4:ping1:t2:aa1:y1:qe", true},
		{"bad int", "d1:ad4:porti-0ee1:q4:ping1:t2:aa1:y1:qe", false},
		{"a not a dictionary", "d1:ai1e1:q4:ping1:t2:aa1:y1:qe", true},
		{"empty", "", false},
		{"not a dict", "li1ee", false},
		{"unterminated", "d1:t2:aa", false},
		{"no t", "d1:y1:qe", false},
		{"t not a string", "d1:ti1e1:y1:qe", false},
		{"a response", "d1:rd7:samples3:abce1:t2:aa1:y1:re", false},
		{"bad y", "d1:t2:aa1:y1:xe", false},
		{"trailing", "d1:t2:aa1:y1:qei1e", false},
		{"too deep", "d1:x" + deep + "1:t2:aa1:y1:qe", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Msg
			if Parse([]byte(tt.packet), &m) == nil {
				t.Fatalf("Parse accepts %q: not a case for QueryID", tt.packet)
			}
			tid, ok := QueryID([]byte(tt.packet))
			if ok != tt.ok || (ok && string(tid) != "aa") {
				t.Fatalf("QueryID(%q) = %q, %v; want ok %v", tt.packet, tid, ok, tt.ok)
			}
		})
	}
}
