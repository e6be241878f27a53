package main

import (
	"fmt"
	"io"
	"slices"
)

func hours(ms int64) string { return fmt.Sprintf("%.1fh", float64(ms)/float64(hour)) }

// report prints the summary and reports whether a property failed.
func (s *sim) report(w io.Writer) bool {
	c := s.c
	fmt.Fprintf(w, "schedsim: %d hashes (+%d new after the outage), %d days, a pass every %s with --limit %d: %d passes\n",
		c.n, c.flood, c.days, c.every, c.limit, s.passes)
	s.reportWake(w)
	s.reportLags(w)
	if s.crash.at != 0 {
		fmt.Fprintf(w, "crash at %s: %d jobs; lease until %s, all planned again by %s; late results merged after: %v\n",
			rfc(s.crash.at), len(s.crashCounted), rfc(s.crash.leaseUntil), rfc(s.crash.replannedBy), s.late == nil)
		if s.crash.replannedBy < s.crash.leaseUntil || s.crash.replannedBy > s.crash.leaseUntil+c.every.Milliseconds()+day {
			s.failf("crashed jobs planned again by %s, lease until %s", rfc(s.crash.replannedBy), rfc(s.crash.leaseUntil))
		}
		if s.late != nil {
			s.failf("the crashed fetch's late results were never merged (their hashes not all planned again)")
		}
	}
	if s.sighted != nil {
		var waits []int64
		never := 0
		for _, at := range s.sighted {
			if at == 0 {
				never++
				continue
			}
			waits = append(waits, at-s.sightT)
		}
		slices.Sort(waits)
		fmt.Fprintf(w, "cold hashes sighted at %s: %d, made hot; %d of them pulled forward; planned after %s (median) to %s (max); %d not planned since\n",
			rfc(s.sightT), len(s.sighted), s.sightOK, hours(pct(waits, 50)), hours(pct(waits, 100)), never)
		if s.sightOK > 0 && len(waits) < s.sightOK {
			s.failf("%d sighted cold hashes pulled forward, only %d planned since", s.sightOK, len(waits))
		}
	}
	if len(s.errs) > 0 {
		fmt.Fprintf(w, "FAILED: %d checks\n%s\n", len(s.errs), s.errorsText())
		return true
	}
	fmt.Fprintln(w, "ok: no hash lost, no attempt counted twice, new share kept every pass")
	return false
}

// pct is the p-th percentile of sorted v (0 for none).
func pct(v []int64, p int) int64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, len(v)*p/100)]
}

// reportWake compares each hour's wake-ups (next_retry values merge set
// a day or more after the attempt) with the ideal, every one spread evenly
// over its delay's jitter window: a spike means hashes that failed together
// wake together, which jitter is there to prevent.
func (s *sim) reportWake(w io.Writer) {
	worst, worstH := 0.0, int64(-1)
	peak, n := 0.0, 0.0
	for h, ideal := range s.ideal {
		peak = max(peak, s.wake[h])
		if ideal < 100 {
			continue
		}
		n++
		if r := s.wake[h] / ideal; r > worst {
			worst, worstH = r, h
		}
	}
	if worstH < 0 {
		fmt.Fprintln(w, "wake-ups per hour: too few retries of a day or more to compare")
		return
	}
	fmt.Fprintf(w, "wake-ups per hour (delays of a day or more): peak %.0f; of %.0f hours expecting 100 or more, "+
		"the worst is hour %d (day %.1f): %.0f against an even jitter spread of %.1f (x%.2f)\n",
		peak, n, worstH, float64(worstH)/24, s.wake[worstH], s.ideal[worstH], worst)
	if worst > 1.5 {
		s.failf("hour %d: %.0f hashes wake, %.2f times an even jitter spread", worstH, s.wake[worstH], worst)
	}
}

// reportLags prints how long after next_retry hashes were planned, by
// class: in the first days (a backlog while the hashes go through the
// schedule's short steps at --limit), around the outage, from four days
// after it (at most one pass apart), and from the cold tier (the sweep
// reads 16 of 256 partitions a pass: at most 16 passes).
func (s *sim) reportLags(w io.Writer) {
	downFrom, downTo := s.c.t0+s.c.downFrom.Milliseconds(), s.c.t0+s.c.downTo.Milliseconds()
	for _, c := range classes {
		var v, backlog, steady, cold []int64
		for _, l := range s.lags {
			switch {
			case l.class != c:
			case l.due >= downFrom-day && l.due < downTo+2*day:
				backlog = append(backlog, l.ms)
			case l.cold:
				cold = append(cold, l.ms)
			case l.due >= downTo+4*day:
				steady = append(steady, l.ms)
			default:
				v = append(v, l.ms)
			}
		}
		slices.Sort(v)
		slices.Sort(backlog)
		slices.Sort(steady)
		slices.Sort(cold)
		fmt.Fprintf(w, "  %-16s planned after next_retry: first days median %s, p99 %s, max %s (%d); "+
			"around the outage max %s (%d); from day %d max %s (%d); cold median %s, max %s (%d)\n",
			c, hours(pct(v, 50)), hours(pct(v, 99)), hours(pct(v, 100)), len(v), hours(pct(backlog, 100)), len(backlog),
			(downTo+4*day-s.c.t0)/day, hours(pct(steady, 100)), len(steady), hours(pct(cold, 50)), hours(pct(cold, 100)), len(cold))
		// The cold sweep reads 16 of the 256 partitions a pass (plan.cold_partitions).
		if m := pct(cold, 100); m > 16*s.c.every.Milliseconds() {
			s.failf("%s: a cold hash planned %s after its next_retry, more than 16 passes", c, hours(m))
		}
		if m := pct(steady, 100); m > s.c.every.Milliseconds() {
			s.failf("%s: planned %s after its next_retry once the backlog was gone, passes are %s apart", c, hours(m), s.c.every)
		}
	}
}
