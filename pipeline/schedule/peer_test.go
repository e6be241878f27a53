package schedule

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestPenalizePeer(t *testing.T) {
	p := Default()
	const addr = "127.0.0.1:6881"
	tests := []struct {
		name         string
		prev         *schema.PeerPenalty
		class        string
		at           int64
		wantOK       bool
		wantUntil    int64
		wantFailures int32
		wantClass    string
	}{
		{name: "first handshake failure", class: "handshake_failed", at: t0, wantOK: true,
			wantUntil: t0 + hour, wantFailures: 1, wantClass: "handshake_failed"},
		{name: "no_extension is long", class: "no_extension", at: t0, wantOK: true,
			wantUntil: t0 + 7*day, wantFailures: 1, wantClass: "no_extension"},
		{name: "repeat after expiry doubles", class: "rejected", at: t0 + 2*hour,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0 + hour, Failures: 1, LastAt: t0},
			wantOK: true, wantUntil: t0 + 4*hour, wantFailures: 2, wantClass: "rejected"},
		{name: "third in a row quadruples", class: "connect_failed", at: t0,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "connect_failed", Until: t0 - minute, Failures: 2, LastAt: t0 - 11*minute},
			wantOK: true, wantUntil: t0 + 40*minute, wantFailures: 3, wantClass: "connect_failed"},
		{name: "capped at max", class: "hash_mismatch", at: t0,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "hash_mismatch", Until: t0 - day, Failures: 5, LastAt: t0 - 100*day},
			wantOK: true, wantUntil: t0 + 30*day, wantFailures: 6, wantClass: "hash_mismatch"},
		{name: "forgotten after a long clean spell", class: "rejected", at: t0 + 40*day,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0 + hour, Failures: 4, LastAt: t0},
			wantOK: true, wantUntil: t0 + 40*day + hour, wantFailures: 1, wantClass: "rejected"},
		{name: "failure while penalised does not escalate", class: "rejected", at: t0 + 10*minute,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "rejected", Until: t0 + hour, Failures: 1, LastAt: t0},
			wantOK: true, wantUntil: t0 + hour + 10*minute, wantFailures: 1, wantClass: "rejected"},
		{name: "never shortened", class: "connect_failed", at: t0 + hour,
			prev:   &schema.PeerPenalty{Addr: addr, Class: "hash_mismatch", Until: t0 + 7*day, Failures: 1, LastAt: t0},
			wantOK: true, wantUntil: t0 + 7*day, wantFailures: 1, wantClass: "hash_mismatch"},
		{name: "no_peers is not a peer failure", class: "no_peers", at: t0, wantOK: false},
		// The peer does not serve this one hash: the endpoint is not
		// penalised for the hashes it does serve.
		{name: "peer_lacks_torrent penalises no endpoint", class: "peer_lacks_torrent", at: t0, wantOK: false},
		{name: "too_large penalises the peer that claimed it", class: "too_large", at: t0, wantOK: true,
			wantUntil: t0 + 7*day, wantFailures: 1, wantClass: "too_large"},
		{name: "local_error is not a peer failure", class: "local_error", at: t0, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PenalizePeer(p, tt.prev, addr, tt.class, tt.at)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if got.Addr != addr || got.Until != tt.wantUntil || got.Failures != tt.wantFailures || got.Class != tt.wantClass {
				t.Errorf("got %+v (until at+%dm), want until at+%dm, failures %d, class %s",
					got, (got.Until-tt.at)/minute, (tt.wantUntil-tt.at)/minute, tt.wantFailures, tt.wantClass)
			}
			if !Avoided(got, tt.at) || Avoided(got, got.Until) {
				t.Errorf("Avoided does not follow until")
			}
			if tt.prev != nil && got.LastAt < tt.prev.LastAt {
				t.Errorf("last_at went back")
			}
		})
	}
}

// TestPenaltyGrowth: an endpoint that fails every time its penalty ends
// is skipped for base, 2·base, 4·base… up to the cap, never less.
func TestPenaltyGrowth(t *testing.T) {
	p := Default()
	var pp *schema.PeerPenalty
	at := t0
	last := int64(0)
	for i := range 20 {
		next, ok := PenalizePeer(p, pp, "127.0.0.1:1", "handshake_failed", at)
		if !ok {
			t.Fatal("not penalised")
		}
		d := next.Until - at
		if d < last || d > 30*day {
			t.Fatalf("step %d: penalty %dm after %dm", i, d/minute, last/minute)
		}
		last, pp, at = d, &next, next.Until
	}
	if last != 30*day {
		t.Errorf("penalty after 20 failures = %dm, want the 30-day cap", last/minute)
	}
}
