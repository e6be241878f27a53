package schedule

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

const (
	minute = int64(time.Minute / time.Millisecond)
	hour   = 60 * minute
	day    = 24 * hour
)

// t0 is an arbitrary start of the simulated clock: 2025-01-01T00:00:00Z.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

func hashN(n uint64) schema.Hash {
	var h schema.Hash
	binary.BigEndian.PutUint64(h[12:], n)
	return h
}

func newState(n uint64) schema.State {
	return schema.State{InfoHash: hashN(n), FirstSeen: t0, LastSeen: t0, SeenCount: 1,
		MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
}

// inBand fails the test unless got is d×[1-j, 1+j] (to the millisecond).
func inBand(t *testing.T, what string, got int64, d time.Duration, j float64) {
	t.Helper()
	ms := float64(d / time.Millisecond)
	lo, hi := int64(ms*(1-j))-1, int64(ms*(1+j))+1
	if got < lo || got > hi {
		t.Errorf("%s: delay %v outside %v×[%.2f, %.2f]", what, time.Duration(got)*time.Millisecond, d, 1-j, 1+j)
	}
}

func TestApplyFailureClasses(t *testing.T) {
	p := Default()
	soon := time.Duration(p.RetrySoon)
	type step struct {
		class    string
		distinct bool
	}
	tests := []struct {
		name         string
		prior        []step // failures applied first
		class        string
		distinct     bool
		wantDelay    time.Duration
		wantAttempts int32
		wantStep     int32
		wantBad      int32
		wantStatus   string
		wantLast     string // last_failure after; "" means class
	}{
		{name: "no_peers first", class: "no_peers", wantDelay: 30 * time.Minute, wantAttempts: 1, wantStep: 1},
		{name: "no_peers third", prior: []step{{"no_peers", false}, {"no_peers", false}}, class: "no_peers",
			wantDelay: 8 * time.Hour, wantAttempts: 3, wantStep: 3},
		{name: "connect_failed like no_peers", prior: []step{{"no_peers", false}}, class: "connect_failed",
			wantDelay: 2 * time.Hour, wantAttempts: 2, wantStep: 2},
		{name: "timeout like no_peers", class: "timeout", wantDelay: 30 * time.Minute, wantAttempts: 1, wantStep: 1},
		{name: "peer-level retries soon", prior: []step{{"no_peers", false}, {"no_peers", false}}, class: "handshake_failed",
			wantDelay: soon, wantAttempts: 3, wantStep: 2},
		{name: "no_extension retries soon", class: "no_extension", wantDelay: soon, wantAttempts: 1, wantStep: 0},
		{name: "no_ut_metadata retries soon", class: "no_ut_metadata", wantDelay: soon, wantAttempts: 1, wantStep: 0},
		{name: "rejected twice backs off", prior: []step{{"rejected", false}}, class: "rejected",
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1},
		{name: "peer-level after bad metadata backs off", prior: []step{{"hash_mismatch", true}}, class: "no_ut_metadata",
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1, wantBad: 1},
		{name: "hash_mismatch first retries soon", class: "hash_mismatch", distinct: true,
			wantDelay: soon, wantAttempts: 1, wantBad: 1},
		{name: "hash_mismatch from a second source waits long", prior: []step{{"hash_mismatch", true}}, class: "hash_mismatch", distinct: true,
			wantDelay: 7 * Day, wantAttempts: 2, wantStep: 1, wantBad: 2},
		{name: "invalid_metadata from a third source waits longer", prior: []step{{"invalid_metadata", true}, {"hash_mismatch", true}},
			class: "invalid_metadata", distinct: true, wantDelay: 30 * Day, wantAttempts: 3, wantStep: 2, wantBad: 3},
		{name: "same source again is not long", prior: []step{{"hash_mismatch", true}}, class: "hash_mismatch", distinct: false,
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1, wantBad: 1},
		{name: "bad metadata after a swarm failure retries soon", prior: []step{{"no_peers", false}}, class: "invalid_metadata", distinct: true,
			wantDelay: soon, wantAttempts: 2, wantStep: 1, wantBad: 1},
		// One peer's metadata_size is its own unchecked claim: only a
		// second distinct peer saying so makes it the hash's.
		{name: "too_large from one peer retries soon", class: "too_large", distinct: true,
			wantDelay: soon, wantAttempts: 1, wantBad: 1},
		{name: "too_large from a second peer waits long", prior: []step{{"too_large", true}}, class: "too_large", distinct: true,
			wantDelay: 30 * Day, wantAttempts: 2, wantStep: 1, wantBad: 2},
		{name: "too_large again from the same peer retries soon", prior: []step{{"too_large", true}}, class: "too_large",
			wantDelay: soon, wantAttempts: 2, wantBad: 1},
		{name: "too_large after bad metadata from another peer waits long", prior: []step{{"hash_mismatch", true}}, class: "too_large", distinct: true,
			wantDelay: 30 * Day, wantAttempts: 2, wantStep: 1, wantBad: 2},
		{name: "peer-level after too_large backs off", prior: []step{{"too_large", true}}, class: "rejected",
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1, wantBad: 1},
		{name: "local_error not counted", prior: []step{{"no_peers", false}}, class: "local_error",
			wantDelay: soon, wantAttempts: 1, wantStep: 1, wantLast: "no_peers"},
		{name: "local_error on a new hash keeps it new", class: "local_error",
			wantDelay: soon, wantAttempts: 0, wantStep: 0, wantStatus: schema.StatusNew},
		{name: "local_error keeps the counted last_failure", prior: []step{{"handshake_failed", false}}, class: "local_error",
			wantDelay: soon, wantAttempts: 1, wantLast: "handshake_failed"},
		{name: "peer-level after local_error after peer-level backs off",
			prior: []step{{"handshake_failed", false}, {"local_error", false}}, class: "rejected",
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1},
		{name: "bad metadata after local_error after peer-level backs off",
			prior: []step{{"no_ut_metadata", false}, {"local_error", false}}, class: "hash_mismatch",
			wantDelay: 30 * time.Minute, wantAttempts: 2, wantStep: 1},
		{name: "peer-level after local_error after swarm retries soon",
			prior: []step{{"no_peers", false}, {"local_error", false}}, class: "handshake_failed",
			wantDelay: soon, wantAttempts: 2, wantStep: 1},
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
			st.LeaseID, st.LeaseUntil = "L1", now+hour
			if err := ApplyFailure(p, &st, tt.class, now, tt.distinct); err != nil {
				t.Fatal(err)
			}
			inBand(t, tt.class, st.NextRetry-now, tt.wantDelay, p.Jitter)
			wantStatus := tt.wantStatus
			if wantStatus == "" {
				wantStatus = schema.StatusFailed
			}
			if st.Attempts != tt.wantAttempts || st.BackoffStep != tt.wantStep || st.BadMetadata != tt.wantBad || st.MetadataStatus != wantStatus {
				t.Errorf("attempts, step, bad, status = %d, %d, %d, %s; want %d, %d, %d, %s",
					st.Attempts, st.BackoffStep, st.BadMetadata, st.MetadataStatus, tt.wantAttempts, tt.wantStep, tt.wantBad, wantStatus)
			}
			wantLast := tt.wantLast
			if wantLast == "" {
				wantLast = tt.class
			}
			if st.LastAttempt != now || st.LastFailure != wantLast || st.LeaseID != "" || st.LeaseUntil != 0 {
				t.Errorf("last_attempt, last_failure, lease = %d, %q, %q/%d", st.LastAttempt, st.LastFailure, st.LeaseID, st.LeaseUntil)
			}
		})
	}
}

// TestLocalErrorsDoNotStopBackoff alternates a peer-level failure with a
// local error: the peer-level failures are a run all the same (local
// errors are not counted), so the hash moves along its schedule.
func TestLocalErrorsDoNotStopBackoff(t *testing.T) {
	p := Default()
	st := newState(1)
	now := t0
	var steps []int32
	for i := range 7 {
		class := "handshake_failed"
		if i%2 == 1 {
			class = "local_error"
		}
		if err := ApplyFailure(p, &st, class, now, false); err != nil {
			t.Fatal(err)
		}
		if class != "local_error" {
			steps = append(steps, st.BackoffStep)
		}
		now = st.NextRetry
	}
	if want := []int32{0, 1, 2, 3}; !reflect.DeepEqual(steps, want) {
		t.Errorf("backoff steps after each handshake_failed: %v, want %v", steps, want)
	}
	if st.Attempts != 4 || st.LastFailure != "handshake_failed" {
		t.Errorf("attempts %d, last_failure %q; want 4, handshake_failed", st.Attempts, st.LastFailure)
	}
}

func TestTwoSourcesInOneAttempt(t *testing.T) {
	p := Default()
	for _, tt := range []struct {
		class string
		want  time.Duration
	}{{"too_large", 30 * Day}, {"hash_mismatch", 7 * Day}} {
		st := newState(1)
		if err := ApplyFailureFrom(p, &st, tt.class, t0, 2); err != nil {
			t.Fatal(err)
		}
		inBand(t, tt.class+" from two peers in one attempt", st.NextRetry-t0, tt.want, p.Jitter)
		if st.BadMetadata != 2 || st.BackoffStep != 1 {
			t.Errorf("%s: bad %d, step %d; want 2 and 1", tt.class, st.BadMetadata, st.BackoffStep)
		}
	}
}

func TestApplyFailureRefuses(t *testing.T) {
	p := Default()
	st := newState(1)
	if err := ApplyFailure(p, &st, "ok", t0, false); err == nil {
		t.Errorf("class ok accepted as a failure")
	}
	if err := ApplyFailure(p, &st, "weird", t0, false); err == nil {
		t.Errorf("unknown class accepted")
	}
	if st.Attempts != 0 || st.MetadataStatus != schema.StatusNew {
		t.Errorf("a refused failure changed the state: %+v", st)
	}
	ApplySuccess(&st, t0)
	before := st
	if err := ApplyFailure(p, &st, "no_peers", t0+1, false); !errors.Is(err, ErrFetched) {
		t.Errorf("failure after success: %v, want ErrFetched", err)
	}
	if !reflect.DeepEqual(st, before) {
		t.Errorf("a failure changed a fetched hash")
	}
}

func TestApplySuccess(t *testing.T) {
	p := Default()
	st := newState(1)
	for range 3 {
		if err := ApplyFailure(p, &st, "hash_mismatch", st.NextRetry, true); err != nil {
			t.Fatal(err)
		}
	}
	st.Tier = schema.TierCold
	st.LeaseID, st.LeaseUntil = "L", st.NextRetry+hour
	ApplySuccess(&st, st.NextRetry)
	if st.MetadataStatus != schema.StatusFetched || st.NextRetry != 0 || st.LeaseID != "" || st.LeaseUntil != 0 ||
		st.BackoffStep != 0 || st.BadMetadata != 0 || st.LastFailure != "" || st.Attempts != 4 || st.Tier != schema.TierHot {
		t.Fatalf("after success: %+v", st)
	}
	if Due(&st, st.LastAttempt+365*day) {
		t.Errorf("a fetched hash is due")
	}
}

func TestJitterReproducible(t *testing.T) {
	p := Default()
	a, b := newState(42), newState(42)
	_ = ApplyFailure(p, &a, "no_peers", t0, false)
	_ = ApplyFailure(p, &b, "no_peers", t0, false)
	if a.NextRetry != b.NextRetry {
		t.Fatalf("same hash, attempt and seed gave %d and %d", a.NextRetry, b.NextRetry)
	}
	q := p
	q.Seed = 1
	c := newState(42)
	_ = ApplyFailure(q, &c, "no_peers", t0, false)
	if c.NextRetry == a.NextRetry {
		t.Errorf("another seed gave the same time")
	}
	q.Jitter = 0
	d := newState(42)
	_ = ApplyFailure(q, &d, "no_peers", t0, false)
	if d.NextRetry != t0+30*minute {
		t.Errorf("zero jitter: next_retry %d, want exactly +30m", d.NextRetry-t0)
	}
}
