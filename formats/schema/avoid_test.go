package schema

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestAvoidPeersRoundTrip(t *testing.T) {
	in := []AvoidedPeer{{"127.0.0.1:6881", 1767225600000}, {"[::1]:51413", 1767229200000}, {"peer.example:1", 0}}
	s, n := EncodeAvoidPeers(in)
	if n != len(in) {
		t.Fatalf("encoded %d of %d", n, len(in))
	}
	got, err := DecodeAvoidPeers(s)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip: %v, %v; want %v", got, err, in)
	}
	if got, err := DecodeAvoidPeers(""); err != nil || len(got) != 0 {
		t.Errorf("empty list: %v, %v", got, err)
	}
}

func TestEncodeAvoidPeersCaps(t *testing.T) {
	many := make([]AvoidedPeer, MaxAvoidPeers+10)
	for i := range many {
		many[i] = AvoidedPeer{Addr: fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255), Until: 1}
	}
	s, n := EncodeAvoidPeers(many)
	if n != MaxAvoidPeers || strings.Count(s, "\n") != n {
		t.Fatalf("kept %d endpoints, want %d", n, MaxAvoidPeers)
	}
	long := make([]AvoidedPeer, MaxAvoidPeers)
	for i := range long {
		long[i] = AvoidedPeer{Addr: fmt.Sprintf("[2001:db8:aaaa:bbbb:cccc:dddd:%x:%x]:65535", i>>16, i&0xffff), Until: 1767225600000}
	}
	s, n = EncodeAvoidPeers(long)
	if len(s) > MaxAvoidBytes || n == 0 || n == len(long) {
		t.Fatalf("%d bytes for %d endpoints; want at most %d bytes", len(s), n, MaxAvoidBytes)
	}
	if got, err := DecodeAvoidPeers(s); err != nil || len(got) != n {
		t.Fatalf("decoding the capped list: %d, %v", len(got), err)
	}
}

func TestDecodeAvoidPeersErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no time", "127.0.0.1:1\n", "line 1: want ENDPOINT UNTIL_MS"},
		{"no port", "127.0.0.1 5\n", `line 1: "127.0.0.1" is not host:port`},
		{"bad time", "127.0.0.1:1 5\n127.0.0.1:2 soon\n", `line 2: "soon" is not a time`},
		{"too big", strings.Repeat("x", MaxAvoidBytes+1), "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeAvoidPeers(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), AvoidPeersKey) {
				t.Fatalf("err = %v, want it to name %s and say %q", err, AvoidPeersKey, tt.want)
			}
		})
	}
}

func FuzzDecodeAvoidPeers(f *testing.F) {
	f.Add("127.0.0.1:6881 1767225600000\n[::1]:1 0")
	f.Add("a:b c\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := DecodeAvoidPeers(s)
		if err != nil {
			return
		}
		again, n := EncodeAvoidPeers(ps)
		if n != len(ps) {
			t.Fatalf("a decoded list of %d did not encode whole (%d)", len(ps), n)
		}
		if back, err := DecodeAvoidPeers(again); err != nil || !reflect.DeepEqual(back, ps) && len(ps) > 0 {
			t.Fatalf("re-decoding: %v, %v; want %v", back, err, ps)
		}
	})
}

// TestEncodeAvoidPeersSkipsBadEndpoints: an endpoint the decoder would
// refuse (it comes from a results file's peer_failures, which nothing
// checks) is left out of the list, not written into it: one such line
// made every jobs file unreadable to fetch until its penalty ended.
func TestEncodeAvoidPeersSkipsBadEndpoints(t *testing.T) {
	good := []AvoidedPeer{{"127.0.0.1:6881", 5}, {"[::1]:51413", 6}}
	for _, bad := range []string{
		"",
		"127.0.0.1",                     // no port
		"127.0.0.1:",                    // empty port
		"a b:1",                         // a space ends the endpoint
		"a\n127.0.0.2:1 9",              // a newline ends the line
		"1:2:3",                         // not host:port
		strings.Repeat("h", 300) + ":1", // longer than an endpoint
	} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			in := []AvoidedPeer{good[0], {bad, 7}, good[1]}
			s, n := EncodeAvoidPeers(in)
			got, err := DecodeAvoidPeers(s)
			if err != nil {
				t.Fatalf("the encoded list does not decode: %v\n%q", err, s)
			}
			if n != len(good) || !reflect.DeepEqual(got, good) {
				t.Fatalf("encoded %d: %v, want %v", n, got, good)
			}
		})
	}
}
