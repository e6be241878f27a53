package merge

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestFailedEndpointsLeavePeers: an endpoint that failed a counted
// attempt (stored, or a failure applied other than local_error) with a
// class a peer can fail with (not local_error, no_peers nor an unknown
// one) leaves the hash's peers (the announced endpoints plan-retries
// hands out); the others stay in order. A result that does not count
// (late, stale, after the fetch, local_error) drops none: it says
// nothing about the endpoint now. (The penalised ones are in avoid_peers
// as before.)
func TestFailedEndpointsLeavePeers(t *testing.T) {
	peers := []string{"127.0.0.1:6001", "127.0.0.1:6002", "127.0.0.1:6003"}
	at := t0 + minute
	for _, tt := range []struct {
		name    string
		out     string
		fails   []schema.PeerFailure
		lease   string // the result's lease (the hash has none: "" counts)
		fetched bool   // the hash is fetched already
		before  int64  // the hash's last attempt (0: none)
		want    []string
	}{
		{"no peer failed", schema.OutcomeNoPeers, nil, "", false, 0, peers},
		{"connect_failed", schema.OutcomeConnectFailed,
			[]schema.PeerFailure{pfail("6002", schema.OutcomeConnectFailed, at)}, "", false, 0, []string{"127.0.0.1:6001", "127.0.0.1:6003"}},
		{"peer_lacks_torrent (no penalty) and timeout", schema.OutcomePeerLacksTorrent,
			[]schema.PeerFailure{pfail("6001", schema.OutcomePeerLacksTorrent, at), pfail("6003", schema.OutcomeTimeout, at)}, "", false, 0,
			[]string{"127.0.0.1:6002"}},
		{"classes no peer fails with", schema.OutcomeTimeout,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeLocalError, at), pfail("6002", schema.OutcomeNoPeers, at),
				pfail("6003", "gremlins", at)}, "", false, 0, peers},
		{"rejected, no_extension, no_ut_metadata, handshake_failed", schema.OutcomeRejected,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeRejected, at), pfail("6002", schema.OutcomeNoExtension, at),
				pfail("6003", schema.OutcomeNoUTMetadata, at)}, "", false, 0, nil},
		{"handshake_failed", schema.OutcomeHandshakeFailed,
			[]schema.PeerFailure{pfail("6002", schema.OutcomeHandshakeFailed, at)}, "", false, 0, []string{"127.0.0.1:6001", "127.0.0.1:6003"}},
		{"bad metadata and too_large", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6003", schema.OutcomeHashMismatch, at), pfail("6001", schema.OutcomeTooLarge, at),
				pfail("6002", schema.OutcomeInvalidMetadata, at)}, "", false, 0, nil},
		{"an endpoint not among them", schema.OutcomeRejected, []schema.PeerFailure{pfail("7000", schema.OutcomeRejected, at)}, "", false, 0, peers},
		{"local_error: not counted", schema.OutcomeLocalError,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeRejected, at), pfail("6003", schema.OutcomeHashMismatch, at)}, "", false, 0, peers},
		{"late: its lease moved on", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6003", schema.OutcomeHashMismatch, at)}, "L-gone", false, 0, peers},
		{"stale: unleased, not newer than the last attempt", schema.OutcomeRejected,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeRejected, at)}, "", false, at, peers},
		{"failure after the fetch", schema.OutcomeRejected,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeRejected, at)}, "", true, 0, peers},
		{"ok, after others failed", schema.OutcomeOK,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeNoExtension, at), pfail("6002", schema.OutcomeLocalError, at)}, "", false, 0,
			[]string{"127.0.0.1:6002", "127.0.0.1:6003"}},
		{"ok, late: stored all the same", schema.OutcomeOK,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeNoExtension, at)}, "L-gone", false, 0,
			[]string{"127.0.0.1:6002", "127.0.0.1:6003"}},
		{"ok for a hash already fetched", schema.OutcomeOK,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeNoExtension, at)}, "", true, 0, peers},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x50, 1), t0)
			st.Peers = slices.Clone(peers)
			if tt.fetched {
				schedule.ApplySuccess(&st, t0)
			}
			if tt.before != 0 {
				if err := schedule.ApplyFailure(schedule.Default(), &st, schema.OutcomeNoPeers, tt.before, false); err != nil {
					t.Fatal(err)
				}
			}
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
