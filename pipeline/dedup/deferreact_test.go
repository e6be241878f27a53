package dedup

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestDeferredNewSightingReactivates: a sighting after merge deferred a
// never-tried hash (peers_penalised: still new, last_attempt set) for at
// least reactivation.dormant_after pulls its next_retry forward, as a
// failed hash's, whether its row is spliced in a hot file or thawed from
// a cold one; a short deferral and a hash never attempted keep theirs.
func TestDeferredNewSightingReactivates(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	day := 24 * time.Hour
	pol := schedule.Default()
	newRow := func(h schema.Hash, tier string, attempted, wait time.Duration) schema.State {
		st := schema.State{InfoHash: h, HashType: 1, FirstSeen: t0.Add(-60 * day).UnixMilli(),
			LastSeen: t0.Add(-40 * day).UnixMilli(), SeenCount: 1, MetadataStatus: schema.StatusNew, Tier: tier,
			NextRetry: t0.Add(-60 * day).UnixMilli()}
		if attempted != 0 {
			st.LastAttempt = t0.Add(attempted).UnixMilli()
			st.NextRetry = st.LastAttempt + wait.Milliseconds()
		}
		return st
	}
	hotDeferred := newRow(schema.Hash{0x43, 1}, schema.TierHot, -day, 7*day)
	hotShort := newRow(schema.Hash{0x43, 2}, schema.TierHot, -time.Hour, 3*time.Hour)
	hotUntried := newRow(schema.Hash{0x43, 3}, schema.TierHot, 0, 0)
	coldDeferred := newRow(schema.Hash{0x42, 1}, schema.TierCold, -day, 30*day)
	commitColdHot(t, data, []schema.State{coldDeferred}, []schema.State{hotDeferred, hotShort, hotUntried})

	seen := t0.Add(time.Hour).UnixMilli()
	st := sightAll(t, dir, data, pol, seen, hotDeferred, hotShort, hotUntried, coldDeferred)
	s := readState(t, data)
	tests := []struct {
		name   string
		was    schema.State
		pulled bool
	}{
		{name: "hot, deferred 7d (spliced)", was: hotDeferred, pulled: true},
		{name: "hot, deferred 3h", was: hotShort},
		{name: "hot, never attempted", was: hotUntried},
		{name: "cold, deferred 30d (thawed)", was: coldDeferred, pulled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s[tt.was.InfoHash]
			want, wantAt, wantReason := tt.was.NextRetry, int64(0), schema.ReasonNew
			if tt.pulled {
				want = seen + schedule.ReactivationOffset(pol, &tt.was)
				wantAt, wantReason = seen, schema.ReasonReactivated
			}
			if r.NextRetry != want || r.Reactivated != wantAt || schedule.Reason(&r) != wantReason {
				t.Errorf("%x: next_retry %s (was %s), reactivated_at %d, reason %s; want %s, %d, %s", r.InfoHash,
					schema.Time(r.NextRetry), schema.Time(tt.was.NextRetry), r.Reactivated, schedule.Reason(&r),
					schema.Time(want), wantAt, wantReason)
			}
			if r.Tier != schema.TierHot || r.MetadataStatus != schema.StatusNew || r.LastAttempt != tt.was.LastAttempt ||
				r.LastSeen != seen {
				t.Errorf("%x: tier %s, %s, last_attempt %d, last_seen %s; want hot, new, %d, %s", r.InfoHash, r.Tier,
					r.MetadataStatus, r.LastAttempt, schema.Time(r.LastSeen), tt.was.LastAttempt, schema.Time(seen))
			}
		})
	}
	if st.Reactivated != 2 || st.Rewarmed != 1 {
		t.Errorf("reactivated %d, rewarmed %d; want 2 and 1", st.Reactivated, st.Rewarmed)
	}
}
