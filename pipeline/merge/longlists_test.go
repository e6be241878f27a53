package merge

import (
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestUnionLongLists: lists longer than any writer keeps (merge --from
// refuses them from the other dataset; this one's own could be one)
// union as short ones do, the first seen kept, at most maxAvoid and
// schema.MaxStatePeers, in time linear in their length: 100,000 entries
// a side took the quadratic duplicate check 35 s of CPU.
func TestUnionLongLists(t *testing.T) {
	const n = 100_000
	e := endpoints(2 * n)
	a := schema.State{AvoidPeers: e[:n], Peers: e[:n]}
	b := schema.State{AvoidPeers: append(slices.Clone(e[n/2:]), e[0]), Peers: e[n:], LastSeen: 1}
	start := time.Now()
	avoid := unionAvoid(0, &a, &b)
	peers := unionPeers(&b, &a) // b seen last: its list first
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the union of lists of %d entries took %v", n, d)
	}
	if want := e[2*n-maxAvoid:]; !slices.Equal(avoid, want) {
		t.Errorf("avoid_peers %q, want %q", avoid, want)
	}
	if want := e[n : n+schema.MaxStatePeers]; !slices.Equal(peers, want) {
		t.Errorf("peers %q, want %q", peers, want)
	}
}
