package schedule

import (
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// dormant returns a hash that has failed no_peers six times (now on the
// 30-day step), last seen at its first sighting.
func dormant(t *testing.T, p Policy, class string) (schema.State, int64) {
	t.Helper()
	st := newState(9)
	now := t0
	for range 6 {
		if err := ApplyFailure(p, &st, class, now, false); err != nil {
			t.Fatal(err)
		}
		now = st.NextRetry
	}
	return st, st.LastAttempt
}

func TestReactivate(t *testing.T) {
	p := Default()
	tests := []struct {
		name       string
		class      string
		edit       func(st *schema.State, last int64)
		observed   int64 // relative to the last attempt
		want       bool
		wantNext   int64 // relative to the last attempt; 0 = unchanged
		wantReason string
	}{
		{name: "dormant no_peers seen again", class: "no_peers", observed: 2 * day, want: true, wantNext: 2 * day, wantReason: schema.ReasonReactivated},
		{name: "seen before the last attempt", class: "no_peers", observed: -hour, want: false, wantReason: schema.ReasonRetry},
		{name: "seen at the last attempt", class: "no_peers", observed: 0, want: false, wantReason: schema.ReasonRetry},
		{name: "sighting already folded into last_seen", class: "no_peers", edit: func(st *schema.State, last int64) { st.LastSeen = last + 2*day }, observed: 2 * day, want: true, wantNext: 2 * day, wantReason: schema.ReasonReactivated},
		{name: "reactivated six days ago", class: "no_peers", edit: func(st *schema.State, last int64) { st.Reactivated = last - 4*day }, observed: 2 * day, want: false, wantReason: schema.ReasonRetry},
		{name: "reactivated seven days ago", class: "no_peers", edit: func(st *schema.State, last int64) { st.Reactivated = last - 5*day }, observed: 2 * day, want: true, wantNext: 2 * day, wantReason: schema.ReasonReactivated},
		{name: "early in its schedule", class: "no_peers", edit: func(st *schema.State, last int64) { st.NextRetry = last + 8*hour }, observed: hour, want: false, wantReason: schema.ReasonRetry},
		{name: "peer-level soon retry", class: "rejected", edit: func(st *schema.State, last int64) { st.NextRetry = last + 10*minute }, observed: minute, want: false, wantReason: schema.ReasonRetry},
		{name: "too_large stays put", class: "too_large", observed: 2 * day, want: false, wantReason: schema.ReasonRetry},
		{name: "hash_mismatch stays put", class: "hash_mismatch", observed: 2 * day, want: false, wantReason: schema.ReasonRetry},
		{name: "already due soon", class: "no_peers", edit: func(st *schema.State, last int64) { st.NextRetry = last + day }, observed: 2 * day, want: false, wantReason: schema.ReasonRetry},
		// A cold hash whose retry does not move is just hot again: no
		// reactivated_at (it would jump the queue and use up MinInterval).
		{name: "cold too_large becomes hot", class: "too_large", edit: func(st *schema.State, _ int64) { st.Tier = schema.TierCold }, observed: 100 * day, want: true, wantReason: schema.ReasonRetry},
		{name: "cold hash_mismatch becomes hot", class: "hash_mismatch", edit: func(st *schema.State, _ int64) { st.Tier = schema.TierCold }, observed: 2 * day, want: true, wantReason: schema.ReasonRetry},
		{name: "cold handshake_failed overdue becomes hot", class: "handshake_failed", edit: func(st *schema.State, last int64) { st.Tier, st.NextRetry = schema.TierCold, last+day }, observed: 100 * day, want: true, wantReason: schema.ReasonRetry},
		{name: "cold no_peers overdue becomes hot", class: "no_peers", edit: func(st *schema.State, last int64) { st.Tier = schema.TierCold }, observed: 40 * day, want: true, wantReason: schema.ReasonRetry},
		// archive.fetched_unseen: a sighting brings a fetched hash back hot.
		{name: "cold fetched becomes hot", class: "ok", edit: func(st *schema.State, _ int64) { st.Tier = schema.TierCold }, observed: 40 * day, want: true},
		{name: "cold no_peers pulled and hot", class: "no_peers", edit: func(st *schema.State, _ int64) { st.Tier = schema.TierCold }, observed: 10 * day, want: true, wantNext: 10 * day, wantReason: schema.ReasonReactivated},
		{name: "new hash is not reactivated", class: "", observed: day, want: false, wantReason: schema.ReasonNew},
		// archive.new_unseen: a sighting brings a never-tried hash back hot,
		// planned as new again.
		{name: "cold new becomes hot", class: "", edit: func(st *schema.State, _ int64) { st.Tier = schema.TierCold }, observed: 100 * day, want: true, wantReason: schema.ReasonNew},
		{name: "fetched hash is not reactivated", class: "ok", observed: 100 * day, want: false},
		{name: "leased hash keeps its lease", class: "no_peers", edit: func(st *schema.State, last int64) { st.LeaseID, st.LeaseUntil = "L", last+3*day }, observed: 2 * day, want: true, wantNext: 2 * day, wantReason: schema.ReasonReactivated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st schema.State
			var last int64
			switch tt.class {
			case "":
				st, last = newState(9), t0
			case "ok":
				st, last = newState(9), t0
				ApplySuccess(&st, t0)
			default:
				st, last = dormant(t, p, tt.class)
			}
			if tt.edit != nil {
				tt.edit(&st, last)
			}
			before := st
			got := Reactivate(p, &st, last+tt.observed, 0)
			if got != tt.want {
				t.Fatalf("Reactivate = %v, want %v (state %+v)", got, tt.want, before)
			}
			if !got {
				if st.NextRetry != before.NextRetry || st.Tier != before.Tier || st.Reactivated != before.Reactivated {
					t.Errorf("Reactivate returned false but changed the state")
				}
			} else {
				wantAt := last + tt.observed // reactivated: pulled forward
				if tt.wantReason != schema.ReasonReactivated {
					wantAt = before.Reactivated
					if st.NextRetry != before.NextRetry {
						t.Errorf("next_retry moved without reactivating")
					}
				}
				if st.Tier != schema.TierHot || st.Reactivated != wantAt || st.BackoffStep != before.BackoffStep {
					t.Errorf("tier %s, reactivated_at %d (want %d), step %d", st.Tier, st.Reactivated, wantAt, st.BackoffStep)
				}
				spread := millis(p.Reactivation.Spread)
				if off := st.NextRetry - (last + tt.wantNext); tt.wantNext != 0 && (off < 0 || off >= spread) {
					t.Errorf("next_retry = last+%d, want last+%d plus under %d of spread", st.NextRetry-last, tt.wantNext, spread)
				}
				if st.LeaseID != before.LeaseID || st.LeaseUntil != before.LeaseUntil {
					t.Errorf("lease changed")
				}
				again := st
				if Reactivate(p, &again, last+tt.observed+day, 0) {
					t.Errorf("a second sighting a day later reactivated again")
				}
				if !cold(before) && Reactivate(p, &again, last+tt.observed+8*day, 0) {
					t.Errorf("a sighting with no attempt since the reactivation reactivated again")
				}
			}
			if tt.wantReason != "" && Reason(&st) != tt.wantReason {
				t.Errorf("Reason = %s, want %s", Reason(&st), tt.wantReason)
			}
		})
	}
}

func cold(st schema.State) bool { return st.Tier == schema.TierCold }

// TestReactivationSpreadsAWave: one sweep sighting a thousand dormant
// hashes at the same instant makes them due over reactivation.spread, not
// all at once; reproducibly, and unchanged by a later sighting.
func TestReactivationSpreadsAWave(t *testing.T) {
	p := Default()
	_, last := dormant(t, p, schema.OutcomeNoPeers)
	seen := last + 2*day // within its 30-day wait
	spread := millis(p.Reactivation.Spread)
	buckets := map[int64]int{}
	for n := range uint64(1000) {
		st, _ := dormant(t, p, schema.OutcomeNoPeers)
		st.InfoHash = hashN(1000 + n)
		if !Reactivate(p, &st, seen, 0) {
			t.Fatal("not reactivated")
		}
		off := st.NextRetry - seen
		if off < 0 || off >= spread {
			t.Fatalf("next_retry at sighting+%dms, outside [0, %d)", off, spread)
		}
		buckets[off/minute]++
		again := st
		again.NextRetry = st.LastAttempt + 30*day
		again.Reactivated = 0
		if !Reactivate(p, &again, seen+hour, 0) || again.NextRetry-(seen+hour) != off {
			t.Fatalf("a later sighting moved the hash to a different offset")
		}
	}
	if len(buckets) < 28 {
		t.Errorf("1000 reactivations fell in %d of the 30 minutes of the spread", len(buckets))
	}
	for m, n := range buckets {
		if n > 80 {
			t.Errorf("minute %d of the spread holds %d of 1000 reactivations", m, n)
		}
	}
	p.Reactivation.Spread = 0
	st, _ := dormant(t, p, schema.OutcomeNoPeers)
	if !Reactivate(p, &st, seen, 0) || st.NextRetry != seen {
		t.Errorf("spread 0: next_retry at sighting+%dms, want the sighting", st.NextRetry-seen)
	}
}

// TestColdMadeHotKeepsSchedule: reset_schedule resets only a hash a
// sighting pulled forward; a cold hash that just turns hot keeps its step,
// and MinInterval does not start (a later pull is not held back).
func TestColdMadeHotKeepsSchedule(t *testing.T) {
	p := Default()
	p.Reactivation.ResetSchedule = true
	st, last := dormant(t, p, schema.OutcomeNoPeers)
	st.Tier = schema.TierCold
	step, next := st.BackoffStep, st.NextRetry
	seen := next + day // the 30-day retry is already overdue
	if !Reactivate(p, &st, seen, 0) || st.Tier != schema.TierHot {
		t.Fatal("cold hash not made hot")
	}
	if st.BackoffStep != step || st.NextRetry != next || st.Reactivated != 0 {
		t.Fatalf("step %d (was %d), next_retry moved %dms, reactivated_at %d: want all unchanged",
			st.BackoffStep, step, st.NextRetry-next, st.Reactivated)
	}
	// The overdue retry fails; a sighting a day later pulls it forward.
	_ = ApplyFailure(p, &st, schema.OutcomeNoPeers, seen+hour, false)
	if !Reactivate(p, &st, seen+day, 0) || st.Reactivated != seen+day || st.BackoffStep != 0 {
		t.Errorf("a sighting a day after the unpulled one: reactivated_at %d, step %d; want the sighting, 0",
			st.Reactivated-last, st.BackoffStep)
	}
}

// TestReactivatedThenFailsAgain: the reactivated attempt is planned with
// reason reactivated; if it fails the hash keeps its long delay by
// default, or starts the schedule again with reset_schedule.
func TestReactivatedThenFailsAgain(t *testing.T) {
	for _, reset := range []bool{false, true} {
		p := Default()
		p.Reactivation.ResetSchedule = reset
		st, last := dormant(t, p, schema.OutcomeNoPeers)
		seen := last + 3*day
		if !Reactivate(p, &st, seen, 0) {
			t.Fatal("not reactivated")
		}
		if !Due(&st, seen+millis(p.Reactivation.Spread)) || Reason(&st) != schema.ReasonReactivated {
			t.Fatalf("reactivated hash not due with reason reactivated within the spread of the sighting")
		}
		if pr := PriorityOf(p, &st, seen, 0); !pr.Reactivated {
			t.Errorf("priority does not mark the reactivation")
		}
		st.LastSeen = seen
		_ = ApplyFailure(p, &st, schema.OutcomeNoPeers, seen+minute, false)
		want := 30 * Day
		if reset {
			want = Day / 48 // 30m
		}
		inBand(t, "after reactivation", st.NextRetry-(seen+minute), want, p.Jitter)
		if Reason(&st) != schema.ReasonRetry {
			t.Errorf("reason after the next attempt = %s, want retry", Reason(&st))
		}
	}
}

func TestShouldArchive(t *testing.T) {
	p := Default()
	base, last := dormant(t, p, schema.OutcomeNoPeers) // 6 attempts, seen at t0
	fetchedAfter := func(d Duration) Policy { q := p; q.Archive.FetchedUnseen, q.Archive.NewUnseen = d, 0; return q }
	newAfter := func(d Duration) Policy { q := p; q.Archive.NewUnseen = d; return q }
	// never makes the hash never tried, seen at t0 (after local errors
	// and deferrals, which leave it new, when errs).
	never := func(errs bool) func(st *schema.State) {
		return func(st *schema.State) {
			*st = newState(9)
			if errs {
				if err := ApplyFailure(p, st, schema.OutcomeLocalError, t0+day, false); err != nil {
					t.Fatal(err)
				}
				if err := ApplyDeferral(p, st, t0+2*day, t0+30*day); err != nil {
					t.Fatal(err)
				}
				if st.MetadataStatus != schema.StatusNew || st.Attempts != 0 {
					t.Fatalf("a local error and a deferral made a new hash %s with %d attempts", st.MetadataStatus, st.Attempts)
				}
			}
		}
	}
	tests := []struct {
		name string
		edit func(st *schema.State)
		now  int64
		want bool
		p    *Policy // nil: the default policy
	}{
		{"past schedule and 90 days unseen", nil, t0 + 90*day, true, nil},
		{"89 days unseen", nil, t0 + 89*day, false, nil},
		{"five attempts", func(st *schema.State) { st.Attempts = 5 }, t0 + 200*day, false, nil},
		// Attempts count, not schedule steps (README, ArchiveRule): a
		// peer-level failure retried soon holds the step below its last.
		{"six attempts, step 5", func(st *schema.State) {
			st.BackoffStep, st.LastFailure = 5, schema.OutcomeHandshakeFailed
		}, t0 + 90*day, true, nil},
		{"seen recently", func(st *schema.State) { st.LastSeen = last }, t0 + 90*day, false, nil},
		{"already cold", func(st *schema.State) { st.Tier = schema.TierCold }, t0 + 200*day, false, nil},
		{"fetched", func(st *schema.State) { ApplySuccess(st, last) }, t0 + 200*day, false, nil},
		{"fetched, fetched_unseen 30d, 30 days unseen", func(st *schema.State) { ApplySuccess(st, last) }, t0 + 30*day,
			true, ptr(fetchedAfter(Duration(30 * Day)))},
		{"fetched, fetched_unseen 30d, 29 days unseen", func(st *schema.State) { ApplySuccess(st, last) }, t0 + 29*day,
			false, ptr(fetchedAfter(Duration(30 * Day)))},
		{"fetched, fetched_unseen 30d, leased", func(st *schema.State) {
			ApplySuccess(st, last)
			st.LeaseID, st.LeaseUntil = "L", t0+201*day
		}, t0 + 200*day, false, ptr(fetchedAfter(Duration(30 * Day)))},
		{"new, fetched_unseen 30d, new_unseen 0", func(st *schema.State) { st.MetadataStatus = schema.StatusNew }, t0 + 200*day,
			false, ptr(fetchedAfter(Duration(30 * Day)))},
		{"never tried, 90 days unseen", never(false), t0 + 90*day, true, nil},
		{"never tried, 89 days unseen", never(false), t0 + 89*day, false, nil},
		{"never tried after a local error and a deferral, 90 days unseen", never(true), t0 + 90*day, true, nil},
		{"never tried, new_unseen 0", never(false), t0 + 900*day, false, ptr(newAfter(0))},
		{"never tried, new_unseen 30d, 30 days unseen", never(false), t0 + 30*day, true, ptr(newAfter(Duration(30 * Day)))},
		{"never tried, leased", func(st *schema.State) {
			never(false)(st)
			st.LeaseID, st.LeaseUntil = "L", t0+201*day
		}, t0 + 200*day, false, nil},
		{"never tried, already cold", func(st *schema.State) { never(false)(st); st.Tier = schema.TierCold }, t0 + 200*day, false, nil},
		{"live lease", func(st *schema.State) { st.LeaseID, st.LeaseUntil = "L", t0+201*day }, t0 + 200*day, false, nil},
		{"expired lease", func(st *schema.State) { st.LeaseID, st.LeaseUntil = "L", t0+199*day }, t0 + 200*day, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := base
			if tt.edit != nil {
				tt.edit(&st)
			}
			q := p
			if tt.p != nil {
				q = *tt.p
			}
			if got := ShouldArchive(q, &st, tt.now); got != tt.want {
				t.Errorf("ShouldArchive = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDue(t *testing.T) {
	st := newState(1)
	if !Due(&st, t0) {
		t.Errorf("a new hash with no next_retry is not due")
	}
	st.LeaseID, st.LeaseUntil = "L", t0+hour
	if Due(&st, t0) || !Leased(&st, t0) {
		t.Errorf("a leased hash is due")
	}
	if !Due(&st, t0+hour) {
		t.Errorf("the hash did not return to the queue when its lease expired")
	}
	st.NextRetry = t0 + 2*hour
	if Due(&st, t0+hour) || !Due(&st, t0+2*hour) {
		t.Errorf("next_retry not honoured")
	}
}

// BenchmarkReactivate is dedup's per-sighting cost: most sightings are of
// hashes that are not dormant.
func BenchmarkReactivate(b *testing.B) {
	p := Default()
	fresh := newState(1)
	failed := newState(2)
	_ = ApplyFailure(p, &failed, schema.OutcomeNoPeers, t0, false)
	for i := 0; b.Loop(); i++ {
		st := fresh
		if i%8 == 0 {
			st = failed
		}
		Reactivate(p, &st, t0+int64(i)*minute, 0)
	}
}

func ptr[T any](v T) *T { return &v }
