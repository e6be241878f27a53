package schedule

import (
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestProvenBadMetadataWaits: once bad_metadata.sources distinct peers have
// served bad metadata (or claimed it too large), the hash waits its long
// delay; the same failure from one of those peers again (its penalty over,
// it is dialled again) adds no evidence either way and must not bring the
// hash back sooner than that wait.
func TestProvenBadMetadataWaits(t *testing.T) {
	p := Default()
	type step struct {
		class    string
		distinct bool
	}
	tests := []struct {
		name    string
		prior   []step
		class   string
		minWait time.Duration // un-jittered
	}{
		{name: "hash_mismatch from a known source after the long wait",
			prior: []step{{"hash_mismatch", true}, {"hash_mismatch", true}}, class: "hash_mismatch", minWait: 7 * Day},
		{name: "invalid_metadata from a known source after the long wait",
			prior: []step{{"invalid_metadata", true}, {"hash_mismatch", true}}, class: "invalid_metadata", minWait: 7 * Day},
		{name: "known source after a swarm failure past the long wait",
			prior: []step{{"hash_mismatch", true}, {"hash_mismatch", true}, {"no_peers", false}}, class: "hash_mismatch", minWait: 7 * Day},
		{name: "known source after the third source's longer wait",
			prior: []step{{"hash_mismatch", true}, {"hash_mismatch", true}, {"hash_mismatch", true}}, class: "hash_mismatch", minWait: 30 * Day},
		{name: "too_large from a known source after the long wait",
			prior: []step{{"too_large", true}, {"too_large", true}}, class: "too_large", minWait: 30 * Day},
		{name: "too_large from a known source after a swarm failure",
			prior: []step{{"too_large", true}, {"too_large", true}, {"no_peers", false}}, class: "too_large", minWait: 30 * Day},
		{name: "known source when the swarm schedule is already longer",
			prior: []step{{"no_peers", false}, {"no_peers", false}, {"no_peers", false}, {"no_peers", false}, {"no_peers", false},
				{"no_peers", false}, {"hash_mismatch", true}, {"hash_mismatch", true}}, class: "hash_mismatch", minWait: 30 * Day},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(1)
			now := t0
			for _, s := range tt.prior {
				if err := ApplyFailure(p, &st, s.class, now, s.distinct); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			bad := st.BadMetadata
			if err := ApplyFailure(p, &st, tt.class, now, false); err != nil {
				t.Fatal(err)
			}
			lo := int64(float64(tt.minWait/time.Millisecond)*(1-p.Jitter)) - 1
			if got := st.NextRetry - now; got < lo {
				t.Errorf("bad_metadata %d (sources %d): a known source again retries after %v, want at least %v×%.1f",
					bad, p.BadMetadata.Sources, time.Duration(got)*time.Millisecond, tt.minWait, 1-p.Jitter)
			}
			if st.BadMetadata != bad || st.MetadataStatus != schema.StatusFailed {
				t.Errorf("bad_metadata %d, status %s; want %d, failed", st.BadMetadata, st.MetadataStatus, bad)
			}
		})
	}
}

// TestProvenBadOtherFailures: a hash proven bad that fails for another
// reason after its long wait (most often "rejected": the only peers found
// were its known bad sources, still penalised, so fetch avoided them all)
// learned nothing about its metadata and waits its long delay again; a hash
// with a single bad source (not proven) keeps the short schedule, and a
// local error (our fault) is retried soon either way.
func TestProvenBadOtherFailures(t *testing.T) {
	p := Default()
	proven := []string{"hash_mismatch", "hash_mismatch"}
	tests := []struct {
		name    string
		prior   []string // each from a distinct source
		class   string
		minWait time.Duration // un-jittered; 0: at most maxWait
		maxWait time.Duration
	}{
		{name: "rejected (all sources avoided)", prior: proven, class: "rejected", minWait: 7 * Day},
		{name: "no peers", prior: proven, class: "no_peers", minWait: 7 * Day},
		{name: "connect failed", prior: proven, class: "connect_failed", minWait: 7 * Day},
		{name: "timeout after three sources", prior: append(slices.Clone(proven), "invalid_metadata"), class: "timeout", minWait: 30 * Day},
		{name: "rejected, one source only", prior: proven[:1], class: "rejected", maxWait: 3 * time.Hour},
		{name: "local error", prior: proven, class: "local_error", maxWait: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(1)
			now := t0
			for _, c := range tt.prior {
				if err := ApplyFailure(p, &st, c, now, true); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			if err := ApplyFailure(p, &st, tt.class, now, false); err != nil {
				t.Fatal(err)
			}
			got := time.Duration(st.NextRetry-now) * time.Millisecond
			if lo := time.Duration(float64(tt.minWait)*(1-p.Jitter)) - time.Millisecond; tt.minWait > 0 && got < lo {
				t.Errorf("%s after %v: retries after %v, want at least %v", tt.class, tt.prior, got, lo)
			}
			if tt.maxWait > 0 && got > tt.maxWait {
				t.Errorf("%s after %v: retries after %v, want at most %v", tt.class, tt.prior, got, tt.maxWait)
			}
		})
	}
}

// TestProvenBadNotReactivated: a sighting is no news about metadata that
// bad_metadata.sources distinct peers have proven bad, whichever failure
// came last. Such a hash most often fails "rejected" next (its known bad
// sources, still penalised, are all fetch finds), a class the reactivation
// rule lists: that must not pull its long wait (7d, 30d from a third
// source) forward at every sighting, which would retry it weekly until a
// success. A cold one sighted is just hot again; one bad source alone
// (not proven) is still reactivated.
func TestProvenBadNotReactivated(t *testing.T) {
	p := Default()
	proven := []string{"hash_mismatch", "hash_mismatch"}
	tests := []struct {
		name       string
		prior      []string // each from a distinct source
		last       string
		cold       bool
		wantPulled bool
	}{
		{name: "rejected after two sources", prior: proven, last: "rejected"},
		{name: "no_peers after two sources", prior: proven, last: "no_peers"},
		{name: "timeout after three sources", prior: append(slices.Clone(proven), "invalid_metadata"), last: "timeout"},
		{name: "connect_failed after two too_large", prior: []string{"too_large", "too_large"}, last: "connect_failed"},
		{name: "cold, rejected after two sources", prior: proven, last: "rejected", cold: true},
		{name: "rejected after one source", prior: proven[:1], last: "rejected", wantPulled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newState(3)
			now := t0
			for _, c := range tt.prior {
				if err := ApplyFailure(p, &st, c, now, true); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			// Then the last failure, until the wait is long enough to be
			// dormant (one source: its schedule's steps).
			for st.LastFailure != tt.last || st.NextRetry-st.LastAttempt < 2*day {
				if err := ApplyFailure(p, &st, tt.last, now, false); err != nil {
					t.Fatal(err)
				}
				now = st.NextRetry
			}
			if tt.cold {
				st.Tier = schema.TierCold
			}
			before := st
			seen := st.LastAttempt + day
			got := Reactivate(p, &st, seen, 0)
			pulled := st.NextRetry != before.NextRetry
			if pulled != tt.wantPulled || (st.Reactivated != 0) != tt.wantPulled {
				t.Errorf("bad_metadata %d, last failure %s, waiting %v: a sighting a day after the attempt moved next_retry by %v (reactivated_at %d), want moved: %v",
					st.BadMetadata, st.LastFailure, time.Duration(before.NextRetry-before.LastAttempt)*time.Millisecond,
					time.Duration(before.NextRetry-st.NextRetry)*time.Millisecond, st.Reactivated, tt.wantPulled)
			}
			if got != (tt.wantPulled || tt.cold) || st.Tier != schema.TierHot {
				t.Errorf("Reactivate = %v, tier %s; want %v, hot", got, st.Tier, tt.wantPulled || tt.cold)
			}
		})
	}
}
