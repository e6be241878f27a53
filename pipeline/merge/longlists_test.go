package merge

import (
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
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

// TestApplyLongPeerFailures: a result's peer_failures have no bound (fetch
// tries every peer it finds until --timeout): one of 100,000 is applied
// in time linear in them (the duplicate checks scanned a list grown to
// all of them: 109 s and 268 s for 200,000 before), with the same
// avoid_peers (the last maxAvoid distinct, most recent last) and sources
// counted.
func TestApplyLongPeerFailures(t *testing.T) {
	const n = 100_000
	e := endpoints(n)
	tests := []struct {
		name    string
		outcome string
		wantBad int32
	}{
		{"penalised endpoints", schema.OutcomeConnectFailed, 0},
		{"bad-metadata sources", schema.OutcomeHashMismatch, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := failedAt(t, hashAt(0x07, 1), t0, t0+hour)
			st.AvoidPeers = []string{e[n-1], "127.0.0.1:1"}
			var pfs []schema.PeerFailure
			for _, a := range append(slices.Clone(e), e[5], e[n-3]) {
				pfs = append(pfs, schema.PeerFailure{Addr: a, Class: tt.outcome, At: t0 + 2*hour})
			}
			r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: t0 + 2*hour, Outcome: tt.outcome, PeerFailures: pfs}
			start := time.Now()
			if v, _ := applyResult(schedule.Default(), &st, &r, nil); v != applied {
				t.Fatalf("verdict %d, want applied", v)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("applying %d peer failures took %v", len(pfs), d)
			}
			want := append(slices.Clone(e[n-maxAvoid+1:n-3]), e[n-2], e[n-1], e[5], e[n-3])
			if st.BadMetadata != tt.wantBad || !slices.Equal(st.AvoidPeers, want) {
				t.Errorf("bad_metadata %d, avoid_peers %q; want %d, %q", st.BadMetadata, st.AvoidPeers, tt.wantBad, want)
			}
		})
	}
}
