package merge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

func pfail(port, class string, at int64) schema.PeerFailure {
	return schema.PeerFailure{Addr: "127.0.0.1:" + port, Class: class, At: at}
}

// TestBadSourcesInOneAttempt: every peer of a result that served bad
// metadata or claimed too_large is a source, whatever its class; a
// peer-level failure beside them is not.
func TestBadSourcesInOneAttempt(t *testing.T) {
	p := schedule.Default()
	at := t0 + minute
	tests := []struct {
		name    string
		outcome string
		peers   []schema.PeerFailure
		wantBad int32
	}{
		{"one hash_mismatch", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at)}, 1},
		{"hash_mismatch and invalid_metadata", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeInvalidMetadata, at)}, 2},
		{"hash_mismatch and too_large", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeTooLarge, at)}, 2},
		{"too_large and invalid_metadata", schema.OutcomeTooLarge,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeTooLarge, at), pfail("6002", schema.OutcomeInvalidMetadata, at)}, 2},
		{"one peer, two classes", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6001", schema.OutcomeInvalidMetadata, at)}, 1},
		{"a peer-level failure is no source", schema.OutcomeHashMismatch,
			[]schema.PeerFailure{pfail("6001", schema.OutcomeHashMismatch, at), pfail("6002", schema.OutcomeHandshakeFailed, at)}, 1},
		{"no peer named", schema.OutcomeInvalidMetadata, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x50, 1), t0)
			r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: at, Outcome: tt.outcome, PeerFailures: tt.peers}
			if v, _ := applyResult(p, &st, &r, nil); v != applied {
				t.Fatalf("verdict %d, want applied", v)
			}
			if st.BadMetadata != tt.wantBad {
				t.Errorf("bad_metadata %d, want %d", st.BadMetadata, tt.wantBad)
			}
			if long := st.BadMetadata >= p.BadMetadata.Sources; long != (st.NextRetry-at > day) {
				t.Errorf("retry after %dm with bad_metadata %d", (st.NextRetry-at)/minute, st.BadMetadata)
			}
		})
	}
}

// TestBadSourcesRemembered: a hash's bad-metadata sources are counted
// once each until its next success, whatever happened to their penalties
// and whichever peers failed it otherwise.
func TestBadSourcesRemembered(t *testing.T) {
	p := schedule.Default()
	type step struct {
		outcome string
		peers   []schema.PeerFailure
		prune   bool // prune avoid_peers as a merge at the attempt does, with every penalty over
	}
	hm, hs := schema.OutcomeHashMismatch, schema.OutcomeHandshakeFailed
	one := func(port, class string) []schema.PeerFailure { return []schema.PeerFailure{pfail(port, class, t0)} }
	tests := []struct {
		name      string
		steps     []step
		wantBad   int32
		wantAvoid []string
	}{
		{"same source after its penalty ended", []step{
			{outcome: hm, peers: one("7777", hm)},
			{outcome: schema.OutcomeNoPeers, prune: true},
			{outcome: hm, peers: one("7777", hm)},
		}, 1, []string{"127.0.0.1:7777"}},
		{"second source after the first's penalty ended", []step{
			{outcome: hm, peers: one("7777", hm), prune: true},
			{outcome: hm, peers: one("7778", schema.OutcomeInvalidMetadata)},
		}, 2, []string{"127.0.0.1:7777", "127.0.0.1:7778"}},
		{"peer-level failures are not sources", []step{
			{outcome: hm, peers: one("7777", hm)},
			{outcome: hs, peers: one("6001", hs)},
			{outcome: hm, peers: one("7777", hm)},
		}, 1, []string{"127.0.0.1:7777"}},
		{"a peer that failed at peer level first is a new source", []step{
			{outcome: hs, peers: one("6001", hs)},
			{outcome: hm, peers: one("7777", hm)},
			{outcome: hm, peers: one("6001", hm)},
		}, 2, []string{"127.0.0.1:7777", "127.0.0.1:6001"}},
		{"a source seen again moves last", []step{
			{outcome: hm, peers: one("7777", hm)},
			{outcome: schema.OutcomeTooLarge, peers: one("7778", schema.OutcomeTooLarge)},
			{outcome: hm, peers: one("7777", hm), prune: true},
		}, 2, []string{"127.0.0.1:7778", "127.0.0.1:7777"}},
		{"unnamed source", []step{
			{outcome: hs, peers: one("6001", hs)},
			{outcome: schema.OutcomeInvalidMetadata},
		}, 1, nil},
		{"without sources the list is pruned", []step{
			{outcome: hs, peers: one("6001", hs), prune: true},
		}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x50, 1), t0)
			at := t0
			for i, s := range tt.steps {
				at = max(at, st.NextRetry) + minute
				r := schema.Result{InfoHash: st.InfoHash, AttemptedAt: at, Outcome: s.outcome, PeerFailures: s.peers}
				if v, _ := applyResult(p, &st, &r, nil); v != applied {
					t.Fatalf("step %d: verdict %d, want applied", i, v)
				}
				if s.prune {
					pruneAvoid(&st, nil, at)
				}
			}
			if st.BadMetadata != tt.wantBad || !slices.Equal(st.AvoidPeers, tt.wantAvoid) {
				t.Errorf("bad_metadata %d, avoid_peers %v; want %d, %v", st.BadMetadata, st.AvoidPeers, tt.wantBad, tt.wantAvoid)
			}
		})
	}
}

func TestUnionAvoid(t *testing.T) {
	withBad := func(bad int32, peers ...string) *schema.State {
		return &schema.State{BadMetadata: bad, AvoidPeers: peers}
	}
	many := make([]string, maxAvoid+2)
	for i := range many {
		many[i] = fmt.Sprintf("127.0.0.1:%d", 7000+i)
	}
	tests := []struct {
		name string
		bad  int32
		a, b *schema.State
		want []string
	}{
		{"no sources: both", 0, withBad(0, "127.0.0.1:1", "127.0.0.1:2"), withBad(0, "127.0.0.1:2", "127.0.0.1:3"),
			[]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}},
		{"both with sources: both", 2, withBad(1, "127.0.0.1:1"), withBad(2, "127.0.0.1:2", "127.0.0.1:1"),
			[]string{"127.0.0.1:1", "127.0.0.1:2"}},
		{"only b has sources", 1, withBad(0, "127.0.0.1:1"), withBad(1, "127.0.0.1:2"), []string{"127.0.0.1:2"}},
		{"only a has sources", 1, withBad(1, "127.0.0.1:1"), withBad(0, "127.0.0.1:2"), []string{"127.0.0.1:1"}},
		{"at most maxAvoid, the last kept", 0, withBad(0, many[:2]...), withBad(0, many[2:]...), many[2:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unionAvoid(tt.bad, tt.a, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBadSourceOutlivesItsPenalty is the auditor's repro through plan and
// merge: 7777 serves bad metadata, a later merge runs after its 7-day
// penalty ended, and 7777 serving bad metadata again is still one source
// (retry soon), not a second one (the long delay). Its job no longer
// avoids 7777: the penalty is over.
func TestBadSourceOutlivesItsPenalty(t *testing.T) {
	h := hashAt(0x51, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	bad := func(at int64) schema.PeerFailure { return pfail("7777", schema.OutcomeHashMismatch, at) }

	j := planJobs(t, dir, t0, 1)[0]
	at := t0 + 10*minute
	runMerge(t, dir, at+minute, writeResults(t, []schema.Result{failure(j, schema.OutcomeHashMismatch, at, bad(at))}))

	at = t0 + 7*day + 12*hour // 7777's penalty ended at t0+7d+10m
	j = planJobs(t, dir, at, 1)[0]
	runMerge(t, dir, at+minute, writeResults(t, []schema.Result{failure(j, schema.OutcomeNoPeers, at)}))
	got := stateOf(t, dir)[h]
	if got.BadMetadata != 1 || !slices.Equal(got.AvoidPeers, []string{"127.0.0.1:7777"}) {
		t.Fatalf("after the penalty ended: bad_metadata %d, avoid_peers %v; want 1, [127.0.0.1:7777]", got.BadMetadata, got.AvoidPeers)
	}

	j = planJobs(t, dir, got.NextRetry, 1)[0]
	if len(j.AvoidPeers) != 0 {
		t.Errorf("job avoid_peers %v: 7777's penalty is over", j.AvoidPeers)
	}
	at = got.NextRetry + minute
	runMerge(t, dir, at+minute, writeResults(t, []schema.Result{failure(j, schema.OutcomeHashMismatch, at, bad(at))}))
	got = stateOf(t, dir)[h]
	if d := got.NextRetry - at; got.BadMetadata != 1 || d > 12*minute {
		t.Errorf("7777 again: bad_metadata %d, retry after %dm; want 1 and ~10m (soon)", got.BadMetadata, d/minute)
	}
}
