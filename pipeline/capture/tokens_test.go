package capture

import (
	"net/netip"
	"testing"
	"time"
)

// TestTokenValidity: an announce token is valid for 5 to 10 minutes
// (BEP 5: "up to ten minutes old"), however long the node was idle in
// between. The secret used to rotate only when a query came, and only
// once however long ago the last rotation was: after an idle spell a
// token of any age was still taken.
func TestTokenValidity(t *testing.T) {
	ip := netip.MustParseAddr("198.51.100.7")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		after time.Duration // from the token's making to the announce
		busy  bool          // a query every 10 s in between
		ip    string
		valid bool
	}{
		{name: "at once", valid: true},
		{name: "4m59s later", after: 4*time.Minute + 59*time.Second, valid: true},
		{name: "4m59s later, busy", after: 4*time.Minute + 59*time.Second, busy: true, valid: true},
		{name: "10m01s later, busy", after: 10*time.Minute + time.Second, busy: true},
		{name: "10m01s later, idle in between", after: 10*time.Minute + time.Second},
		{name: "an hour later, idle in between", after: time.Hour},
		{name: "from another address", ip: "198.51.100.8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, made := range []time.Duration{0, 2 * time.Minute, 4*time.Minute + 59*time.Second} { // where in a rotation
				tk := newTokens(t0)
				tok := tk.make(t0.Add(made), ip)
				if tt.busy {
					for d := 10 * time.Second; d < tt.after; d += 10 * time.Second {
						tk.make(t0.Add(made+d), netip.MustParseAddr("203.0.113.1"))
					}
				}
				from := ip
				if tt.ip != "" {
					from = netip.MustParseAddr(tt.ip)
				}
				if got := tk.valid(t0.Add(made+tt.after), from, tok[:]); got != tt.valid {
					t.Errorf("made %v into the run: valid %v, want %v", made, got, tt.valid)
				}
			}
		})
	}
}
