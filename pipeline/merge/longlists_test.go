package merge

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestUnionLongLists: lists longer than any writer keeps (merge --from
// refuses them from the other dataset; this one's own could be one)
// union as short ones do, the first seen kept, at most maxAvoid and
// schema.MaxStatePeers. Their cost is BenchmarkUnionLongLists's: 100,000
// entries a side took the quadratic duplicate check 35 s of CPU.
func TestUnionLongLists(t *testing.T) {
	for _, n := range []int{40, 5_000} {
		e, a, b := longListStates(n)
		avoid := unionAvoid(0, &a, &b)
		peers, _ := unionPeers(&b, &a) // b seen last: its list first
		if want := e[2*n-maxAvoid:]; !slices.Equal(avoid, want) {
			t.Errorf("%d: avoid_peers %q, want %q", n, avoid, want)
		}
		if want := e[n : n+schema.MaxStatePeers]; !slices.Equal(peers, want) {
			t.Errorf("%d: peers %q, want %q", n, peers, want)
		}
	}
}

// longListStates are two states with lists of n entries each (endpoints
// e), half of a's avoid_peers also in b's.
func longListStates(n int) (e []string, a, b schema.State) {
	e = endpoints(2 * n)
	a = schema.State{AvoidPeers: e[:n], Peers: e[:n]}
	b = schema.State{AvoidPeers: append(slices.Clone(e[n/2:]), e[0]), Peers: e[n:], LastSeen: 1}
	return e, a, b
}

// BenchmarkUnionLongLists: the union of lists of 100,000 entries a side
// (linear; it was quadratic: 35 s of CPU).
func BenchmarkUnionLongLists(b *testing.B) {
	_, x, y := longListStates(100_000)
	for b.Loop() {
		unionAvoid(0, &x, &y)
		unionPeers(&y, &x)
	}
}

// TestApplyLongPeerFailures: a result's peer_failures have no bound (fetch
// tries every peer it finds until --timeout): a long list gives the
// avoid_peers (the last maxAvoid distinct, most recent last) and sources
// counted that a short one would. Its cost is BenchmarkApplyLongPeerFailures's
// (the duplicate checks scanned a list grown to all of them: 109 s and
// 268 s for 200,000 before).
func TestApplyLongPeerFailures(t *testing.T) {
	const n = 5_000
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
			if v, _ := applyResult(schedule.Default(), &st, &r, nil); v != applied {
				t.Fatalf("verdict %d, want applied", v)
			}
			want := append(slices.Clone(e[n-maxAvoid+1:n-3]), e[n-2], e[n-1], e[5], e[n-3])
			if st.BadMetadata != tt.wantBad || !slices.Equal(st.AvoidPeers, want) {
				t.Errorf("bad_metadata %d, avoid_peers %q; want %d, %q", st.BadMetadata, st.AvoidPeers, tt.wantBad, want)
			}
		})
	}
}

// BenchmarkApplyLongPeerFailures: one result of 100,000 bad-metadata
// peer failures (linear; it was quadratic: 58 s for this one).
func BenchmarkApplyLongPeerFailures(b *testing.B) {
	e := endpoints(100_000)
	pfs := make([]schema.PeerFailure, len(e))
	for i, a := range e {
		pfs[i] = schema.PeerFailure{Addr: a, Class: schema.OutcomeHashMismatch, At: t0 + 2*hour}
	}
	for b.Loop() {
		st := failedAt(b, hashAt(0x07, 1), t0, t0+hour)
		r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: t0 + 2*hour, Outcome: schema.OutcomeHashMismatch, PeerFailures: pfs}
		if v, _ := applyResult(schedule.Default(), &st, &r, nil); v != applied {
			b.Fatalf("verdict %d, want applied", v)
		}
	}
}
