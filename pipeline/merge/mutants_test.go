package merge

import (
	"fmt"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestFailureAddsOnlyCountedSources: once a hash has bad-metadata sources,
// its avoid_peers are exactly the sources counted. A failure whose outcome
// is no bad metadata counts no source, so a peer failure of it that names
// hash_mismatch does not join the list (it would then count as known,
// never as a new source); a hash_mismatch outcome adds its new source.
func TestFailureAddsOnlyCountedSources(t *testing.T) {
	const a, b, c = "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"
	tests := []struct {
		name      string
		outcome   string
		wantAvoid []string
		wantBad   int32
	}{
		{"peer-level outcome", schema.OutcomeRejected, []string{a}, 1},
		{"hash_mismatch outcome", schema.OutcomeHashMismatch, []string{a, b}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x01, 1), t0)
			st.MetadataStatus, st.LastFailure, st.LastAttempt, st.Attempts = schema.StatusFailed, schema.OutcomeHashMismatch, t0, 1
			st.BadMetadata, st.AvoidPeers = 1, []string{a}
			r := schema.Result{InfoHash: st.InfoHash, Outcome: tt.outcome, AttemptedAt: t0 + day, PeersFound: 2, PeersTried: 2,
				PeerFailures: []schema.PeerFailure{
					{Addr: b, Class: schema.OutcomeHashMismatch, At: t0 + day},
					{Addr: c, Class: schema.OutcomeRejected, At: t0 + day},
				}}
			if err := applyFailure(schedule.Default(), &st, &r); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(st.AvoidPeers, tt.wantAvoid) || st.BadMetadata != tt.wantBad {
				t.Errorf("avoid_peers %q, bad_metadata %d; want %q, %d", st.AvoidPeers, st.BadMetadata, tt.wantAvoid, tt.wantBad)
			}
		})
	}
}

// TestUnionCopiesNoLease: merge --from never carries the other dataset's
// lease columns into a state row (leases live in DIR/leases/, and a live
// one in the row would keep the hash from being planned): neither for a
// hash only the other dataset has, nor for one both have (the row this
// dataset had keeps none of its own either).
func TestUnionCopiesNoLease(t *testing.T) {
	added, both := hashAt(0x01, 1), hashAt(0x01, 2)
	leased := func(h schema.Hash) schema.State {
		st := failedAt(t, h, t0, t0)
		st.LeaseID, st.LeaseUntil = "theirs", t0+100*day
		return st
	}
	a := makeDataset(t, []schema.State{leased(both)})
	b := makeDataset(t, []schema.State{leased(added), leased(both)})
	runFromT(t, a, b, t0+day)
	got := stateOf(t, a)
	for _, tt := range []struct {
		name string
		h    schema.Hash
	}{{"only theirs", added}, {"both", both}} {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := got[tt.h]
			if !ok || st.LeaseID != "" || st.LeaseUntil != 0 {
				t.Errorf("state row %v: lease %q until %d, want none", ok, st.LeaseID, st.LeaseUntil)
			}
		})
	}
}

// TestUnionStateColumnRules: unionState's per-column rules that the
// end-to-end union tests leave open: on a tie of last_attempt and
// reactivated_at the later next_retry wins; backoff_step and
// reactivated_at are the larger of the two whichever record the retry
// columns come from; tier is hot if either record is. Both records share
// last_seen, so no sighting reactivates anything here.
func TestUnionStateColumnRules(t *testing.T) {
	h := hashAt(0x01, 7)
	tied := failedAt(t, h, t0, t0)
	laterRetry := tied
	laterRetry.NextRetry += hour
	newer := failedAt(t, h, t0, t0, t0+day)              // step 2, tried last
	deeper := failedAt(t, h, t0, t0, t0+hour, t0+2*hour) // step 3, tried before newer
	pulled := deeper
	pulled.Reactivated = t0 + 3*hour
	cold := tied
	cold.Tier = schema.TierCold
	tests := []struct {
		name string
		a, b schema.State
		got  func(schema.State) any
		want any
	}{
		{"tie: the later next_retry", tied, laterRetry, func(s schema.State) any { return s.NextRetry }, laterRetry.NextRetry},
		{"tie: the later next_retry, either order", laterRetry, tied, func(s schema.State) any { return s.NextRetry }, laterRetry.NextRetry},
		{"backoff_step: the larger", newer, deeper, func(s schema.State) any { return s.BackoffStep }, deeper.BackoffStep},
		{"reactivated_at: the later", newer, pulled, func(s schema.State) any { return s.Reactivated }, pulled.Reactivated},
		{"tier: hot if either is", cold, tied, func(s schema.State) any { return s.Tier }, schema.TierHot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := unionState(schedule.Default(), tt.a, tt.b, false)
			if got := tt.got(out); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAvoidListBound: a failure naming more penalising endpoints than
// maxAvoid leaves the hash's avoid_peers at the last maxAvoid of them, in
// order, whether the list was empty or already held others.
func TestAvoidListBound(t *testing.T) {
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", 1000+i) }
	tests := []struct {
		name   string
		before []string
		named  int
	}{
		{"empty list, one more than maxAvoid", nil, maxAvoid + 1},
		{"empty list, many", nil, 3*maxAvoid + 5},
		{"two held, one more than maxAvoid in all", []string{"127.0.0.1:1", "127.0.0.1:2"}, maxAvoid - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newHash(hashAt(0x01, 1), t0)
			st.AvoidPeers = slices.Clone(tt.before)
			r := schema.Result{InfoHash: st.InfoHash, Outcome: schema.OutcomeRejected, AttemptedAt: t0 + day}
			for i := range tt.named {
				r.PeerFailures = append(r.PeerFailures, schema.PeerFailure{Addr: addr(i), Class: schema.OutcomeRejected, At: t0 + day})
			}
			if err := applyFailure(schedule.Default(), &st, &r); err != nil {
				t.Fatal(err)
			}
			all := append(slices.Clone(tt.before), make([]string, 0, tt.named)...)
			for i := range tt.named {
				all = append(all, addr(i))
			}
			if want := all[max(len(all)-maxAvoid, 0):]; !slices.Equal(st.AvoidPeers, want) {
				t.Errorf("avoid_peers (%d) %q,\nwant (%d) %q", len(st.AvoidPeers), st.AvoidPeers, len(want), want)
			}
		})
	}
}
