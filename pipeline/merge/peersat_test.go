package merge

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestPeersAt: peers_at, the time of the newest announcement that put or
// kept an endpoint in peers, is null once merge drops the last one, kept
// while one stays; a union's is the later known one of the records that
// gave it an endpoint.
func TestPeersAt(t *testing.T) {
	fail := func(addrs ...string) *schema.Result {
		r := &schema.Result{}
		for _, a := range addrs {
			r.PeerFailures = append(r.PeerFailures, schema.PeerFailure{Addr: a, Class: schema.OutcomeTimeout})
		}
		return r
	}
	for _, tt := range []struct {
		name   string
		peers  []string
		failed *schema.Result
		want   []string
		wantAt int64
	}{
		{"one of two dropped", []string{"10.0.0.1:1", "10.0.0.2:2"}, fail("10.0.0.1:1"), []string{"10.0.0.2:2"}, 500},
		{"the last dropped", []string{"10.0.0.1:1"}, fail("10.0.0.1:1"), nil, 0},
		{"none failed", []string{"10.0.0.1:1"}, fail(), []string{"10.0.0.1:1"}, 500},
	} {
		t.Run("drop/"+tt.name, func(t *testing.T) {
			st := schema.State{Peers: tt.peers, PeersAt: 500}
			dropFailedPeers(&st, tt.failed)
			if !slices.Equal(st.Peers, tt.want) || st.PeersAt != tt.wantAt {
				t.Errorf("peers %q, peers_at %d; want %q, %d", st.Peers, st.PeersAt, tt.want, tt.wantAt)
			}
		})
	}
	rec := func(seen int64, at int64, peers ...string) schema.State {
		return schema.State{LastSeen: seen, Peers: peers, PeersAt: at}
	}
	for _, tt := range []struct {
		name   string
		a, b   schema.State
		wantAt int64
	}{
		{"both give one", rec(2, 100, "10.0.0.1:1"), rec(1, 300, "10.0.0.2:2"), 300},
		{"the other's all known already", rec(2, 100, "10.0.0.1:1"), rec(1, 300, "10.0.0.1:1"), 100},
		{"one has none", rec(2, 0), rec(1, 300, "10.0.0.2:2"), 300},
		{"neither has one", rec(2, 0), rec(1, 0), 0},
		{"one unknown (format 11)", rec(2, 0, "10.0.0.1:1"), rec(1, 300, "10.0.0.2:2"), 300},
	} {
		t.Run("union/"+tt.name, func(t *testing.T) {
			for _, order := range [][2]*schema.State{{&tt.a, &tt.b}, {&tt.b, &tt.a}} {
				if _, at := unionPeers(order[0], order[1]); at != tt.wantAt {
					t.Errorf("peers_at %d, want %d", at, tt.wantAt)
				}
			}
		})
	}
}
