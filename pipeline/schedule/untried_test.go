package schedule

import (
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestRepeatedPeerFailureNeedsEveryPeerTried: a second soft failure in a
// row moves the hash along its schedule only when the peer-level failure's
// attempt tried every peer it found (peers_tried >= peers_found); one
// that left found peers untried (its time ran out) is retried soon, as the
// first peer-level failure is. Counts fetch never writes for a peer-level
// failure (peers_tried 0: null reads so) are unknown and keep the rule
// without them: back off.
func TestRepeatedPeerFailureNeedsEveryPeerTried(t *testing.T) {
	p := Default()
	soon := time.Duration(p.RetrySoon)
	back := 30 * time.Minute // backoff.rejected[0]
	tests := []struct {
		name         string
		prior        []string // failure classes applied first, every peer found tried
		found, tried int32    // the result's peers_found, peers_tried
		wantDelay    time.Duration
		wantStep     int32
	}{
		{name: "first, tried all", found: 3, tried: 3, wantDelay: soon},
		{name: "first, tried some", found: 3, tried: 1, wantDelay: soon},
		{name: "first, counts unknown", wantDelay: soon},
		{name: "second, tried all", prior: []string{"rejected"}, found: 3, tried: 3, wantDelay: back, wantStep: 1},
		{name: "second, tried all of one", prior: []string{"rejected"}, found: 1, tried: 1, wantDelay: back, wantStep: 1},
		{name: "second, tried some", prior: []string{"rejected"}, found: 3, tried: 1, wantDelay: soon},
		{name: "second, tried all but one", prior: []string{"rejected"}, found: 3, tried: 2, wantDelay: soon},
		// 0 of 0 is also what fetch writes when every peer found was
		// skipped as a known bad source (rejected, none dialled).
		{name: "second, counts unknown", prior: []string{"rejected"}, wantDelay: back, wantStep: 1},
		{name: "second, tried unknown", prior: []string{"rejected"}, found: 3, wantDelay: back, wantStep: 1},
		{name: "second, tried negative", prior: []string{"rejected"}, found: 3, tried: -1, wantDelay: back, wantStep: 1},
		{name: "after bad metadata, tried some", prior: []string{"hash_mismatch"}, found: 4, tried: 2, wantDelay: soon},
		{name: "after bad metadata, tried all", prior: []string{"hash_mismatch"}, found: 4, tried: 4, wantDelay: back, wantStep: 1},
		{name: "after local_error after peer-level, tried some", prior: []string{"rejected", "local_error"},
			found: 5, tried: 2, wantDelay: soon},
		{name: "after a swarm failure, tried all", prior: []string{"no_peers"}, found: 2, tried: 2,
			wantDelay: soon, wantStep: 1},
		{name: "third, after one that tried some", prior: []string{"rejected", "rejected"}, found: 2, tried: 2,
			wantDelay: back, wantStep: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(1)
			now := t0
			for _, c := range tt.prior {
				// A prior rejected left peers untried, so that only the
				// failure under test can move the step.
				r := schema.Result{Outcome: c, AttemptedAt: now, PeersFound: 2, PeersTried: 1}
				if err := ApplyResultFailure(p, &st, &r, 1); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			stepBefore := st.BackoffStep
			r := schema.Result{Outcome: schema.OutcomeRejected, AttemptedAt: now, PeersFound: tt.found, PeersTried: tt.tried}
			if err := ApplyResultFailure(p, &st, &r, 0); err != nil {
				t.Fatal(err)
			}
			inBand(t, tt.name, st.NextRetry-now, tt.wantDelay, p.Jitter)
			if st.BackoffStep != tt.wantStep || st.LastFailure != schema.OutcomeRejected {
				t.Errorf("backoff_step %d (%d before), last_failure %q; want %d, rejected",
					st.BackoffStep, stepBefore, st.LastFailure, tt.wantStep)
			}
		})
	}
}

// TestProvenBadWaitsLongWithPeersUntried: a proven-bad hash (enough
// distinct bad-metadata sources) keeps its long wait after a peer-level
// failure that left peers untried: that wait is about its metadata, not
// its swarm.
func TestProvenBadWaitsLongWithPeersUntried(t *testing.T) {
	p := Default()
	st := newState(1)
	now := t0
	for range 2 {
		if err := ApplyFailure(p, &st, schema.OutcomeHashMismatch, now, true); err != nil {
			t.Fatal(err)
		}
		now = st.NextRetry
	}
	r := schema.Result{Outcome: schema.OutcomeRejected, AttemptedAt: now, PeersFound: 5, PeersTried: 1}
	if err := ApplyResultFailure(p, &st, &r, 0); err != nil {
		t.Fatal(err)
	}
	inBand(t, "rejected on a proven-bad hash", st.NextRetry-now, 7*Day, p.Jitter)
}

// TestApplyFailureFromKeepsRepeatedPeerRule: without a result's counts
// (ApplyFailureFrom, ApplyFailure) a second peer-level failure in a row
// backs off, as before results were read for them.
func TestApplyFailureFromKeepsRepeatedPeerRule(t *testing.T) {
	p := Default()
	st := newState(1)
	for i := range 2 {
		if err := ApplyFailureFrom(p, &st, schema.OutcomeNoUTMetadata, t0+int64(i)*hour, 0); err != nil {
			t.Fatal(err)
		}
	}
	if st.BackoffStep != 1 {
		t.Errorf("backoff_step %d after two no_ut_metadata, want 1", st.BackoffStep)
	}
}

// TestBadMetadataAfterSoftNeedsEveryPeerTried: bad metadata after a soft
// failure, short of proving the hash bad, moves the hash along its
// schedule only when its attempt tried every peer it found. fetch dials on
// after a peer's hash_mismatch, so the job's time can cut the attempt with
// found peers queued: that peer is penalised and the hash retried soon.
// Proof by bad_metadata.sources distinct sources still earns the long
// wait however many peers were left, and a too_large claim never moves the
// step before that.
func TestBadMetadataAfterSoftNeedsEveryPeerTried(t *testing.T) {
	p := Default()
	soon := time.Duration(p.RetrySoon)
	back := 30 * time.Minute // backoff.hash_mismatch[0], backoff.invalid_metadata[0]
	long := 7 * Day          // bad_metadata.long[0]
	tests := []struct {
		name         string
		prior        []string // failure classes applied first (each a new source), found peers left untried
		class        string
		sources      int32 // the new sources the failure under test adds
		found, tried int32
		wantDelay    time.Duration
		wantStep     int32
	}{
		{name: "first hash_mismatch, tried all", class: "hash_mismatch", sources: 1, found: 4, tried: 4, wantDelay: soon},
		{name: "hash_mismatch after rejected, tried some", prior: []string{"rejected"}, class: "hash_mismatch",
			sources: 1, found: 4, tried: 2, wantDelay: soon},
		{name: "hash_mismatch after rejected, tried all", prior: []string{"rejected"}, class: "hash_mismatch",
			sources: 1, found: 4, tried: 4, wantDelay: back, wantStep: 1},
		{name: "hash_mismatch after rejected, counts unknown", prior: []string{"rejected"}, class: "hash_mismatch",
			sources: 1, wantDelay: back, wantStep: 1},
		{name: "invalid_metadata after rejected, tried some", prior: []string{"rejected"}, class: "invalid_metadata",
			sources: 1, found: 3, tried: 1, wantDelay: soon},
		{name: "invalid_metadata after rejected, tried all", prior: []string{"rejected"}, class: "invalid_metadata",
			sources: 1, found: 3, tried: 3, wantDelay: back, wantStep: 1},
		{name: "known source again, tried some", prior: []string{"hash_mismatch"}, class: "hash_mismatch",
			found: 3, tried: 1, wantDelay: soon},
		{name: "known source again, tried all", prior: []string{"hash_mismatch"}, class: "hash_mismatch",
			found: 3, tried: 3, wantDelay: back, wantStep: 1},
		{name: "proven by a second source, tried some", prior: []string{"hash_mismatch"}, class: "hash_mismatch",
			sources: 1, found: 4, tried: 1, wantDelay: long, wantStep: 1},
		{name: "proven, known source again, tried some", prior: []string{"hash_mismatch", "hash_mismatch"},
			class: "hash_mismatch", found: 4, tried: 1, wantDelay: long, wantStep: 2},
		{name: "invalid_metadata proves after too_large, tried some", prior: []string{"too_large"},
			class: "invalid_metadata", sources: 1, found: 4, tried: 1, wantDelay: long, wantStep: 1},
		{name: "too_large after rejected, tried all", prior: []string{"rejected"}, class: "too_large",
			sources: 1, found: 2, tried: 2, wantDelay: soon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(1)
			now := t0
			for _, c := range tt.prior {
				r := schema.Result{Outcome: c, AttemptedAt: now, PeersFound: 2, PeersTried: 1}
				if err := ApplyResultFailure(p, &st, &r, 1); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			stepBefore := st.BackoffStep
			r := schema.Result{Outcome: tt.class, AttemptedAt: now, PeersFound: tt.found, PeersTried: tt.tried}
			if err := ApplyResultFailure(p, &st, &r, tt.sources); err != nil {
				t.Fatal(err)
			}
			inBand(t, tt.name, st.NextRetry-now, tt.wantDelay, p.Jitter)
			if st.BackoffStep != tt.wantStep || st.LastFailure != tt.class {
				t.Errorf("backoff_step %d (%d before), last_failure %q; want %d, %s",
					st.BackoffStep, stepBefore, st.LastFailure, tt.wantStep, tt.class)
			}
		})
	}
}
