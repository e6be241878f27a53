package merge

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestFailedEndpointsLeavePeers: an endpoint a fetch attempt failed with
// leaves the hash's peers (the announced endpoints plan-retries hands
// out), whatever its class and whether the result counts; the others
// stay in order. (The penalised ones are in avoid_peers as before.)
func TestFailedEndpointsLeavePeers(t *testing.T) {
	peers := []string{"127.0.0.1:6001", "127.0.0.1:6002", "127.0.0.1:6003"}
	at := t0 + minute
	for _, tt := range []struct {
		name  string
		out   string
		fails []schema.PeerFailure
		lease string // the result's lease (the hash has none: "" counts)
		want  []string
	}{
		{"no peer failed", schema.OutcomeNoPeers, nil, "", peers},
		{"connect_failed", schema.OutcomeConnectFailed, []schema.PeerFailure{pfail("6002", schema.OutcomeConnectFailed, at)}, "",
			[]string{"127.0.0.1:6001", "127.0.0.1:6003"}},
		{"peer_lacks_torrent (no penalty)", schema.OutcomePeerLacksTorrent,
			[]schema.PeerFailure{pfail("6001", schema.OutcomePeerLacksTorrent, at), pfail("6003", schema.OutcomeTimeout, at)}, "",
			[]string{"127.0.0.1:6002"}},
		{"an endpoint not among them", schema.OutcomeRejected, []schema.PeerFailure{pfail("7000", schema.OutcomeRejected, at)}, "", peers},
		{"a result that does not count", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6003", schema.OutcomeHashMismatch, at)}, "L-gone", []string{"127.0.0.1:6001", "127.0.0.1:6002"}},
		{"ok, after others failed", schema.OutcomeOK, []schema.PeerFailure{pfail("6001", schema.OutcomeNoExtension, at)}, "",
			[]string{"127.0.0.1:6002", "127.0.0.1:6003"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x50, 1), t0)
			st.Peers = slices.Clone(peers)
			kept := st.Peers
			r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: at, Outcome: tt.out, LeaseID: tt.lease, PeerFailures: tt.fails}
			applyResult(schedule.Default(), &st, &r, nil)
			if !slices.Equal(st.Peers, tt.want) {
				t.Errorf("peers %q, want %q", st.Peers, tt.want)
			}
			if !slices.Equal(kept, peers) {
				t.Errorf("the state's list was changed in place: %q", kept)
			}
		})
	}
}

// TestUnionPeers: merge --from keeps the peers of the record seen last
// first, then the other's, each once, at most 8.
func TestUnionPeers(t *testing.T) {
	a, b := newHash(hashAt(1, 1), t0), newHash(hashAt(1, 1), t0+minute)
	a.Peers = []string{"1:1", "2:2", "3:3", "4:4", "5:5"}
	b.Peers = []string{"9:9", "2:2", "8:8", "7:7", "6:6"}
	want := []string{"9:9", "2:2", "8:8", "7:7", "6:6", "1:1", "3:3", "4:4"}
	for _, order := range [][2]*schema.State{{&a, &b}, {&b, &a}} {
		out, _ := unionState(schedule.Default(), *order[0], *order[1], false)
		if !slices.Equal(out.Peers, want) {
			t.Errorf("peers %q, want %q", out.Peers, want)
		}
	}
}
