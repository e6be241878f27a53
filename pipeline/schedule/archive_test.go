package schedule

import (
	"fmt"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestMayCross: for bounds on last_seen (the oldest) and attempts (the
// most), MayCross is true whenever a hash of any status within them
// crosses the archive thresholds (Crossed), and false when none does:
// merge skips a row group by it, and must never skip one holding a hash
// to archive. Checked over a grid around both thresholds, never-tried
// and fetched hashes archived or not (a row group of never-tried hashes
// unseen for archive.new_unseen holds hashes to archive whatever its
// attempts).
func TestMayCross(t *testing.T) {
	now := t0 + 400*day
	for _, u := range [][2]Duration{{0, 0}, {0, Duration(30 * Day)}, {0, Duration(120 * Day)},
		{Duration(90 * Day), 0}, {Duration(30 * Day), Duration(120 * Day)}, {Duration(120 * Day), Duration(30 * Day)}} {
		a := Default().Archive // 6 attempts, 90 days
		a.NewUnseen, a.FetchedUnseen = u[0], u[1]
		ages := []int64{0, 29 * day, 30*day - 1, 30 * day, 89 * day, 90*day - 1, 90 * day, 120 * day, 300 * day}
		t.Run(fmt.Sprintf("new_unseen %v, fetched_unseen %v", u[0], u[1]), func(t *testing.T) {
			for _, oldest := range ages {
				for hi := int32(0); hi <= 8; hi++ {
					some := false
					for _, age := range ages {
						for n := int32(0); n <= hi && age <= oldest; n++ {
							for _, status := range []string{schema.StatusNew, schema.StatusFailed, schema.StatusFetched} {
								some = some || a.Crossed(status, n, now-age, now)
							}
						}
					}
					if got := a.MayCross(now-oldest, hi, now); got != some {
						t.Errorf("seen %d days ago at the oldest, %d attempts at most: MayCross = %v, some hash crosses: %v",
							oldest/day, hi, got, some)
					}
				}
			}
			if !a.MayCross(-1, 0, now) {
				t.Errorf("a last_seen bound below 0 bounded something")
			}
		})
	}
}

// TestCutoffs: Crossed holds exactly when a hash's attempts and
// last_seen are within the Cutoffs of its status, over a grid around
// both thresholds, never-tried and fetched hashes archived or not.
func TestCutoffs(t *testing.T) {
	now := t0 + 400*day
	for _, u := range [][2]Duration{{0, 0}, {0, Duration(30 * Day)}, {Duration(90 * Day), 0}, {Duration(30 * Day), Duration(30 * Day)}} {
		a := Default().Archive
		a.NewUnseen, a.FetchedUnseen = u[0], u[1]
		fetchedUnseen := a.FetchedUnseen
		for _, status := range []string{schema.StatusNew, schema.StatusFailed, schema.StatusFetched} {
			minAttempts, latestSeen, ok := a.Cutoffs(status, now)
			for _, age := range []int64{0, 30*day - 1, 30 * day, 90*day - 1, 90 * day, 300 * day} {
				for n := int32(0); n <= 8; n++ {
					within := ok && n >= minAttempts && now-age <= latestSeen
					if got := a.Crossed(status, n, now-age, now); got != within {
						t.Errorf("new_unseen %v, fetched_unseen %v, %s, %d attempts, unseen %d ms: Crossed = %v, within the cutoffs: %v",
							a.NewUnseen, fetchedUnseen, status, n, age, got, within)
					}
				}
			}
		}
	}
}

// TestShouldArchiveDeferred: a hot failed hash merge has just deferred
// goes cold once unseen for archive.unseen, whatever its attempts (here
// one, below min_attempts), unless it holds a live lease; not a new or
// fetched one (archive.new_unseen and fetched_unseen rule those), nor
// any when archive.unseen is 0.
func TestShouldArchiveDeferred(t *testing.T) {
	p := Default()
	failed := newState(7) // seen at t0
	if err := ApplyFailure(p, &failed, schema.OutcomeConnectFailed, t0+hour, false); err != nil {
		t.Fatal(err)
	}
	if err := ApplyDeferral(p, &failed, t0+90*day, t0+91*day); err != nil {
		t.Fatal(err)
	}
	off := p
	off.Archive.Unseen = 0
	tests := []struct {
		name string
		edit func(st *schema.State)
		now  int64
		p    Policy
		want bool
	}{
		{"failed, one attempt, 90 days unseen", nil, t0 + 90*day, p, true},
		{"failed, 89 days unseen", nil, t0 + 89*day, p, false},
		{"archive.unseen 0", nil, t0 + 900*day, off, false},
		{"new", func(st *schema.State) { st.MetadataStatus, st.Attempts = schema.StatusNew, 0 }, t0 + 200*day, p, false},
		{"fetched", func(st *schema.State) { ApplySuccess(st, t0+2*hour) }, t0 + 200*day, p, false},
		{"already cold", func(st *schema.State) { st.Tier = schema.TierCold }, t0 + 200*day, p, false},
		{"live lease", func(st *schema.State) { st.LeaseID, st.LeaseUntil = "L", t0+201*day }, t0 + 200*day, p, false},
		{"expired lease", func(st *schema.State) { st.LeaseID, st.LeaseUntil = "L", t0+199*day }, t0 + 200*day, p, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := failed
			if tt.edit != nil {
				tt.edit(&st)
			}
			if got := ShouldArchiveDeferred(tt.p, &st, tt.now); got != tt.want {
				t.Errorf("ShouldArchiveDeferred = %v, want %v (status %s, attempts %d, tier %s)", got, tt.want,
					st.MetadataStatus, st.Attempts, st.Tier)
			}
		})
	}
}
