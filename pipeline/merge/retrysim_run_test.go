package merge

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestRetrySchedulerOverSixtyDays drives plan-retries → a fetch that
// fails every hash with its own class → merge for 60 simulated days (a
// pass each hour something is due: sim.next), checking the retry
// scheduler's design (seed #18) end to end:
//
//   - no hash is ever lost, and each attempt counts once (sim.observe);
//   - every delay is its class's schedule within the jitter band: swarm
//     classes +30m, 2h, 8h, 1d, 7d, then 30d; a peer-level class retries
//     soon first (10m) and then follows it; bad metadata retries soon,
//     then waits 7d once two peers served it, 30d from a third;
//   - a hash is never planned before its next_retry, and at most 12h
//     after it (a day for cold ones), but for the retries that fell due
//     while the scheduler was down for four days;
//   - new hashes keep their share of every pass under the flood of due
//     retries the outage leaves, with n/3 new hashes arriving then;
//   - a crashed fetch's jobs are planned again at the first pass after
//     their lease ends, and its results, merged late, count nothing;
//   - cold hashes sighted again turn hot and are planned within the
//     reactivation delay and spread (by the next hourly pass);
//   - at the end nothing is overdue by more than a day.
func TestRetrySchedulerOverSixtyDays(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 60 days of passes")
	}
	const n, limit = 30, 4
	p := schedule.Default()
	s := newSim(t, n, limit, func(i int) int64 {
		if i%4 == 3 {
			return t0 - 85*day // unseen long: cold once tried enough
		}
		return t0
	})
	downFrom, downTo := t0+6*day, t0+10*day
	var late []schema.Result // a crashed fetch's results, merged after their hashes were planned again
	var crashLease int64
	lateBefore := map[schema.Hash]int{}
	var sighted []schema.Hash
	var sightedAt int64
	end := t0 + 60*day
	for now := t0; now < end; {
		if now >= downFrom && now < downTo { // scheduler down: retries pile up
			now = downTo
			s.sight(s.fresh(n/3), now) // and a flood of new hashes with it
		}
		if sighted == nil && now >= t0+30*day {
			sighted, sightedAt = s.coldSorted(), now
			if len(sighted) < 3 {
				t.Fatalf("%d cold hashes by day 30, want some", len(sighted))
			}
			sighted = sighted[:3]
			s.sight(sighted, now)
			for _, h := range sighted {
				if sh := s.hashes[h]; sh.tier != schema.TierHot || sh.dueAt > now+hour {
					t.Errorf("sighted cold %s %s: tier %s, due %s; want hot, due within the hour",
						sh.class, schema.Hex(h), sh.tier, tm(sh.dueAt))
				}
			}
		}
		jobs, ps := s.plan(now)
		if q := newQuota(limit, p.Plan.NewShare, ps.DueNew, ps.DueRetry+ps.DueCold > 0); ps.PlannedNew < q {
			t.Errorf("%s: %d new jobs of %d due, want at least %d (due retries %d, cold %d)",
				tm(now), ps.PlannedNew, ps.DueNew, q, ps.DueRetry, ps.DueCold)
		}
		var rs []schema.Result
		for _, j := range jobs {
			rs = append(rs, s.fail(j, now+minute))
		}
		switch {
		case crashLease == 0 && len(jobs) > 0 && now >= t0+3*day:
			late, crashLease = rs, jobs[0].LeaseUntil // fetch crashed: nothing merged, the leases run out
			for _, j := range jobs {
				lateBefore[j.InfoHash] = len(s.hashes[j.InfoHash].attempts)
			}
		case len(jobs) > 0:
			for _, j := range jobs {
				if _, ok := lateBefore[j.InfoHash]; ok && len(s.hashes[j.InfoHash].attempts) == lateBefore[j.InfoHash] &&
					(now < crashLease || now >= crashLease+hour) {
					t.Errorf("crashed job of %s planned again at %s, its lease ended %s", schema.Hex(j.InfoHash), tm(now), tm(crashLease))
				}
				s.countAttempt(j, now)
			}
			s.merge(now+2*minute, rs)
		}
		if late != nil && s.allAttemptedAfter(late) {
			if st := s.merge(now+3*minute, late); st.LateFailures != int64(len(late)) || st.Applied != 0 {
				t.Errorf("late results: %d ignored, %d applied; want all %d ignored", st.LateFailures, st.Applied, len(late))
			}
			late = nil
		}
		now = s.next(now, end, ps.DueUnplanned > 0 || late != nil)
	}
	if late != nil {
		t.Error("the crashed jobs were never all planned again")
	}
	for _, h := range sighted {
		sh := s.hashes[h]
		i := slices.IndexFunc(sh.attempts, func(a int64) bool { return a >= sightedAt })
		if i < 0 || sh.attempts[i] > sightedAt+hour {
			t.Errorf("sighted cold %s %s: attempts %v, want one within the hour after %s", sh.class, schema.Hex(h), sh.attempts, tm(sightedAt))
		}
	}
	for h, sh := range s.hashes {
		s.checkDelays(p, h, sh)
		for i, due := range sh.dues {
			lag, bound := sh.attempts[i]-due, 12*hour
			switch {
			case due == 0: // never scheduled (null next_retry): planned by first_seen
				continue
			case i == 0: // never tried before: the new pool's backlog
				bound = 4 * day
			case due >= downFrom-day && due < downTo+2*day:
				bound = downTo - downFrom + 2*day
			case sh.wasCold:
				bound = day
			}
			if lag > bound {
				t.Errorf("%s %s: attempt %d planned %s after its next_retry, want at most %s",
					sh.class, schema.Hex(h), i+1, time.Duration(lag)*time.Millisecond, time.Duration(bound)*time.Millisecond)
			}
		}
		if sh.dueAt < end-day {
			t.Errorf("%s %s: due since %s at the end, overdue", sh.class, schema.Hex(h), tm(sh.dueAt))
		}
	}
}

// checkDelays checks each delay sh was given after an attempt against
// its class's schedule, within the jitter band.
func (s *sim) checkDelays(p schedule.Policy, h schema.Hash, sh *simHash) {
	s.t.Helper()
	for i, got := range sh.delays {
		var want schedule.Duration
		switch schedule.KindOf(sh.class) {
		case schedule.KindSwarm:
			want = p.Delay(sh.class, int32(i))
		case schedule.KindPeer:
			want = p.RetrySoon
			if i > 0 {
				want = p.Delay(sh.class, int32(i-1))
			}
		case schedule.KindBadMetadata:
			want = p.RetrySoon
			if i > 0 {
				want = p.BadMetadata.Long[min(i-1, len(p.BadMetadata.Long)-1)]
			}
		}
		ms := float64(time.Duration(want) / time.Millisecond)
		if lo, hi := int64(ms*(1-p.Jitter))-1, int64(ms*(1+p.Jitter))+1; got < lo || got > hi {
			s.t.Errorf("%s %s: delay after attempt %d is %s, want %s ±%.0f%%", sh.class, schema.Hex(h), i+1,
				time.Duration(got)*time.Millisecond, time.Duration(want), 100*p.Jitter)
		}
	}
}

// allAttemptedAfter reports whether every hash of rs was attempted (and
// merged) after rs's attempts.
func (s *sim) allAttemptedAfter(rs []schema.Result) bool {
	for _, r := range rs {
		a := s.hashes[r.InfoHash].attempts
		if len(a) == 0 || a[len(a)-1] <= r.AttemptedAt {
			return false
		}
	}
	return true
}

// coldSorted returns the cold hashes, in hash order.
func (s *sim) coldSorted() []schema.Hash {
	var out []schema.Hash
	for h, sh := range s.hashes {
		if sh.tier == schema.TierCold {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b schema.Hash) int { return bytes.Compare(a[:], b[:]) })
	return out
}
