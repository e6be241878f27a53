package schedule

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestApplyDeferral: an attempt that skipped every peer found as penalised
// (peers_penalised) is no failure of the hash. attempts, last_failure,
// backoff_step, bad_metadata and metadata_status stay; the next retry is
// the earliest running penalty's end (retry_after), or RetrySoon after the
// attempt when that is later, spread upward only by the jitter. Applied as
// the failure "rejected" was before, the hash counted an attempt and, after
// a peer-level failure, moved along its schedule. A retry_after more than
// MaxDuration on waits MaxDuration.
func TestApplyDeferral(t *testing.T) {
	p := Default()
	soon := int64(time.Duration(p.RetrySoon) / time.Millisecond)
	type step struct {
		class    string
		distinct bool
	}
	tests := []struct {
		name  string
		prior []step
		after int64 // retry_after - attempted_at
	}{
		{"never tried, retry_after past RetrySoon", nil, 50 * minute},
		{"never tried, retry_after before RetrySoon", nil, 2 * minute},
		{"retry_after already over", nil, -5 * minute},
		{"after a swarm failure", []step{{"no_peers", false}}, 3 * hour},
		{"after a peer-level failure", []step{{"handshake_failed", false}}, 50 * minute},
		{"after two peer-level failures", []step{{"rejected", false}, {"no_extension", false}}, 6 * day},
		{"proven bad", []step{{"hash_mismatch", true}, {"hash_mismatch", true}}, 7 * day},
		{"proven bad, retry_after before RetrySoon", []step{{"hash_mismatch", true}, {"invalid_metadata", true}}, minute},
		// A delay past int64 wrapped next_retry to ~292 million years BC.
		{"retry_after at the end of int64", nil, math.MaxInt64 - t0 - 2*minute},
		{"retry_after just past MaxDuration", nil, int64(MaxDuration/time.Millisecond) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for n := range uint64(50) { // many hashes: the jitter's whole range
				st := newState(n + 1)
				now := t0
				for _, s := range tt.prior {
					if err := ApplyFailure(p, &st, s.class, now, s.distinct); err != nil {
						t.Fatal(err)
					}
					now = st.NextRetry
				}
				st.LeaseID, st.LeaseUntil = "lease", now+hour
				before := st
				at, retryAfter := now+minute, now+minute+tt.after
				if err := ApplyDeferral(p, &st, at, retryAfter); err != nil {
					t.Fatal(err)
				}
				if st.Attempts != before.Attempts || st.LastFailure != before.LastFailure ||
					st.BackoffStep != before.BackoffStep || st.BadMetadata != before.BadMetadata ||
					st.MetadataStatus != before.MetadataStatus {
					t.Fatalf("hash %d: attempts %d last_failure %q backoff_step %d bad_metadata %d status %q; "+
						"want %d %q %d %d %q (unchanged)", n, st.Attempts, st.LastFailure, st.BackoffStep, st.BadMetadata,
						st.MetadataStatus, before.Attempts, before.LastFailure, before.BackoffStep, before.BadMetadata,
						before.MetadataStatus)
				}
				if st.LastAttempt != at || st.LeaseID != "" || st.LeaseUntil != 0 {
					t.Fatalf("hash %d: last_attempt %d lease %q until %d; want %d, the lease cleared",
						n, st.LastAttempt, st.LeaseID, st.LeaseUntil, at)
				}
				d := min(max(tt.after, soon), int64(MaxDuration/time.Millisecond)) // a longer wait is MaxDuration
				lo, hi := at+d, at+int64(float64(d)*(1+p.Jitter))
				if st.NextRetry < lo || st.NextRetry >= hi {
					t.Fatalf("hash %d: next_retry %+d ms after the attempt; want in [%d, %d)",
						n, st.NextRetry-at, lo-at, hi-at)
				}
			}
		})
	}
}

// TestApplyDeferralRefuses: a deferral needs its retry_after and never
// touches a fetched hash; ApplyFailure refuses peers_penalised, which is
// no failure class.
func TestApplyDeferralRefuses(t *testing.T) {
	p := Default()
	st := newState(1)
	if err := ApplyDeferral(p, &st, t0, 0); err == nil {
		t.Fatal("retry_after 0 applied")
	}
	if err := ApplyFailure(p, &st, schema.OutcomePeersPenalised, t0, false); err == nil || st.Attempts != 0 {
		t.Fatalf("ApplyFailure(peers_penalised): err %v, attempts %d; want refused", err, st.Attempts)
	}
	ApplySuccess(&st, t0)
	if err := ApplyDeferral(p, &st, t0+hour, t0+2*hour); !errors.Is(err, ErrFetched) {
		t.Fatalf("fetched hash: err %v, want ErrFetched", err)
	}
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Default()
	bad.Backoff[schema.OutcomePeersPenalised] = DefaultSchedule()
	if err := bad.Validate(); err == nil {
		t.Fatal("policy with backoff.peers_penalised accepted")
	}
}
