package leases

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestLiveExpiredPrune: a lease is live until its lease_until, kept for
// Grace after it (a late result still finds it), and pruned once that has
// passed.
func TestLiveExpiredPrune(t *testing.T) {
	const until = 1_000_000
	h := schema.Hash{1}
	for _, tt := range []struct {
		name           string
		now            int64
		live, expired  bool
		prunedFromSet1 int
	}{
		{"before its end", until - 1, true, false, 0},
		{"at its end", until, false, false, 0},
		{"within the grace", until + Grace, false, false, 0},
		{"past the grace", until + Grace + 1, false, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := schema.Lease{InfoHash: h, LeaseUntil: until}
			ls := Set{h: l}
			if got := ls.Live(h, tt.now); got != tt.live {
				t.Errorf("Live = %v, want %v", got, tt.live)
			}
			if got := ls.Live(schema.Hash{2}, tt.now); got {
				t.Error("a hash without a lease is live")
			}
			if got := Expired(l, tt.now); got != tt.expired {
				t.Errorf("Expired = %v, want %v", got, tt.expired)
			}
			if got := ls.Prune(tt.now); got != tt.prunedFromSet1 || len(ls) != 1-tt.prunedFromSet1 {
				t.Errorf("Prune = %d leaving %d leases, want %d", got, len(ls), tt.prunedFromSet1)
			}
		})
	}
}
