package schedule

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestPenalizePeerEdges: a failure exactly Forget after the penalty's end
// still escalates (forgotten only when more than Forget before), and a
// failure dated before the endpoint's last one (results merged out of
// order) leaves last_at at the later time.
func TestPenalizePeerEdges(t *testing.T) {
	p := Default()
	const addr = "127.0.0.1:6881"
	forget := millis(p.PeerPenalty.Forget)
	tests := []struct {
		name         string
		prev         schema.PeerPenalty
		at           int64
		wantFailures int32
		wantLastAt   int64
	}{
		{"exactly Forget after its end", schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0, Failures: 2, LastAt: t0 - hour},
			t0 + forget, 3, t0 + forget},
		{"one past Forget after its end", schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0, Failures: 2, LastAt: t0 - hour},
			t0 + forget + 1, 1, t0 + forget + 1},
		{"dated before the last failure", schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0 - hour, Failures: 1, LastAt: t0 + day},
			t0, 2, t0 + day},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := tt.prev
			got, ok := PenalizePeer(p, &prev, addr, "rejected", tt.at)
			if !ok || got.Failures != tt.wantFailures || got.LastAt != tt.wantLastAt {
				t.Errorf("PenalizePeer = %+v, %v; want failures %d, last_at %d", got, ok, tt.wantFailures, tt.wantLastAt)
			}
		})
	}
}
