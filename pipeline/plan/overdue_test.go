package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestOverdueNewIsPlanned: a quiet never-tried hash due for longer than
// plan.new_overdue_after gets one of the new pool's jobs over busier
// never-tried hashes (plan.new_overdue_share, at least one job); ranked
// by activity alone it came last in every pass while discovery brought
// busier ones. The edges: due for less than the bound, the share 0, a
// reactivated or cold never-tried hash (not overdue: first in its pool, or
// the cold tier's), and an overdue hash the busiest too (one job). The
// reserve's job counts in planned_new_overdue.
func TestOverdueNewIsPlanned(t *testing.T) {
	now := ms(t0) + 60*day
	for _, tc := range []struct {
		name  string
		wait  int64 // how long the quiet hash has been due
		share float64
		edit  func(st *schema.State)
		limit int
		want  bool // the quiet hash planned
		first bool // and as the first job
	}{
		{name: "due 8 days, bound 7", wait: 8 * day, share: 0.1, limit: 4, want: true, first: true},
		{name: "due 7 days and a millisecond", wait: 7*day + 1, share: 0.1, limit: 4, want: true, first: true},
		{name: "due exactly 7 days", wait: 7 * day, share: 0.1, limit: 4},
		{name: "due 6 days", wait: 6 * day, share: 0.1, limit: 4},
		{name: "overdue share 0", wait: 30 * day, limit: 4},
		{name: "limit 1", wait: 8 * day, share: 0.1, limit: 1, want: true, first: true},
		{name: "overdue and the busiest", wait: 8 * day, share: 0.1, limit: 4, want: true, first: true,
			edit: func(st *schema.State) { st.Activity, st.LastSeen = 1000, now }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule.Default()
			p.Plan.NewOverdueShare = tc.share
			quiet := newHash(hashAt(0x00, 1), now-tc.wait)
			quiet.NextRetry, quiet.Activity = now-tc.wait, 0.01
			if tc.edit != nil {
				tc.edit(&quiet)
			}
			states := []schema.State{quiet}
			// 20 busier never-tried hashes, folded in an hour ago.
			for i := range uint64(20) {
				st := newHash(hashAt(byte(0x10+i), i), now-hour)
				st.NextRetry, st.Activity = now-hour, 8
				states = append(states, st)
			}
			dir := makeDataset(t, states, nil)
			if err := schedule.Save(dir, p); err != nil {
				t.Fatal(err)
			}
			jobs, st := runPlan(t, dir, now, tc.limit, nil)
			if st.DueNew != 21 || len(jobs) != tc.limit {
				t.Fatalf("due_new %d, %d jobs; want 21 and %d", st.DueNew, len(jobs), tc.limit)
			}
			if len(jobSet(jobs)) != len(jobs) {
				t.Fatalf("a hash planned twice: %d jobs, %d hashes", len(jobs), len(jobSet(jobs)))
			}
			j, got := jobSet(jobs)[quiet.InfoHash]
			if got != tc.want {
				t.Errorf("quiet hash planned: %v, want %v", got, tc.want)
			}
			if got && (j.Reason != schema.ReasonNew || (jobs[0].InfoHash == quiet.InfoHash) != tc.first) {
				t.Errorf("quiet hash's job: reason %s, first %v; want new, %v", j.Reason, jobs[0].InfoHash == quiet.InfoHash, tc.first)
			}
			// The reserve's job is counted apart, within planned_new.
			if want := map[bool]int{true: 1}[tc.want]; st.PlannedNewOverdue != want || st.PlannedNew != len(jobs) {
				t.Errorf("planned_new_overdue %d, planned_new %d; want %d and %d", st.PlannedNewOverdue, st.PlannedNew,
					want, len(jobs))
			}
			// The manifest keeps it as a total beside plan_jobs (status's
			// source), 0 (absent) when no reserve job was planned.
			totals := datasettest.Current(t, dir).Totals
			if got, want := totals[dataset.TotalPlanNewOverdue], int64(st.PlannedNewOverdue); got != want {
				t.Errorf("total %s = %d, want %d (totals %v)", dataset.TotalPlanNewOverdue, got, want, totals)
			}
		})
	}
}

// TestOverdueNewPlannedWithinBound simulates passes under a sustained
// overload of the new pool: each pass more never-tried hashes arrive,
// busier than the quiet ones, than the pass plans (a job fails the
// hash, which then leaves the new pool); the pools are filled through
// two pickers, flushed often, as a scan's workers fill them. Each quiet
// hash (idle, folded in before the passes or among them) must be planned
// within the passes it takes, from when it is overdue, to plan every
// never-tried hash due before it, at the overdue reserve a pass. Without
// the reserve none was ever planned: the arrivals were busier.
func TestOverdueNewPlannedWithinBound(t *testing.T) {
	for _, limit := range []int{1, 4, 10} {
		for _, overShare := range []float64{0.1, 0.5, 1} {
			for _, arrivals := range []int{2, 3} { // times the pass's limit
				for _, backlog := range []int{0, 30} {
					for seed := range uint64(2) {
						name := fmt.Sprintf("limit %d share %v arrivals %dx backlog %d seed %d", limit, overShare, arrivals, backlog, seed)
						simulateOverdue(t, name, limit, overShare, arrivals, backlog, seed)
					}
				}
			}
		}
	}
}

func simulateOverdue(t *testing.T, name string, limit int, overShare float64, arrivals, backlog int, seed uint64) {
	t.Helper()
	p := schedule.Default()
	p.Plan.NewOverdueShare = overShare
	const step = day // a pass a day
	r := rand.New(rand.NewPCG(seed, 18))
	now0 := ms(t0) + 400*day
	n := uint64(0)
	mk := func(at int64, activity float64) schema.State {
		n++
		st := newHash(hashAt(byte(n), n), at)
		st.NextRetry, st.Activity = at, activity
		return st
	}
	var states []schema.State
	quiet := map[schema.Hash]int{} // quiet hashes, the pass they were folded in
	addQuiet := func(at int64, pass int) {
		st := mk(at, 0.01)
		quiet[st.InfoHash] = pass
		states = append(states, st)
	}
	for range backlog { // busier hashes folded in up to 20 days ago
		states = append(states, mk(now0-r.Int64N(20*day), 1+r.Float64()*64))
	}
	addQuiet(now0-r.Int64N(20*day), 0)
	addQuiet(now0, 1)
	reserve := overdueReserve(newLimit(limit, p.Plan.NewShare), overShare)
	bound := map[schema.Hash]int{} // the pass each quiet hash must be planned by
	planned := map[schema.Hash]int{}
	for pass := 1; pass <= 400 && len(planned) < len(quiet); pass++ {
		now := now0 + int64(pass-1)*step
		for range arrivals * limit {
			states = append(states, mk(now, 2+r.Float64()*64))
		}
		if pass == 5 {
			addQuiet(now, pass)
		}
		for h := range quiet { // overdue at this pass: count who is due before it
			if _, ok := bound[h]; ok || planned[h] > 0 {
				continue
			}
			i := indexOf(states, h)
			if !schedule.Overdue(p, &states[i], now) {
				continue
			}
			ahead := 0
			for j := range states {
				if j != i && states[j].MetadataStatus == schema.StatusNew && states[j].NextRetry <= states[i].NextRetry {
					ahead++
				}
			}
			bound[h] = pass + ahead/reserve
		}
		ps := newPools(limit, 0, p.Plan.NewShare, overShare)
		workers := [2]*picker{ps.picker(), ps.picker()}
		for i := range states {
			st := &states[i]
			if st.MetadataStatus != schema.StatusNew || !schedule.Due(st, now) {
				continue
			}
			w := workers[i%2]
			w.met(poolNew)
			if prio := schedule.PriorityOf(p, st, now, 1); w.wants(poolNew, prio) {
				w.keep(cand{prio: prio, hash: st.InfoHash, pool: poolNew, reason: reasonNew})
			}
			if i%7 == 0 {
				w.flush()
			}
		}
		workers[0].flush()
		workers[1].flush()
		nNew, _, _ := quota(limit, 0, p.Plan.NewShare, ps.due[poolNew], 0, 0)
		picks := ps.pick([3]int{nNew, 0, 0})[poolNew]
		if len(picks) != nNew {
			t.Fatalf("%s: pass %d picked %d, want %d", name, pass, len(picks), nNew)
		}
		for _, c := range picks {
			i := indexOf(states, c.hash)
			if states[i].MetadataStatus != schema.StatusNew {
				t.Fatalf("%s: pass %d picked %x twice", name, pass, c.hash)
			}
			if _, ok := quiet[c.hash]; ok {
				planned[c.hash] = pass
			}
			if err := schedule.ApplyFailure(p, &states[i], schema.OutcomeNoPeers, now, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for h, folded := range quiet {
		if got, want := planned[h], bound[h]; got == 0 || want == 0 || got > want {
			t.Fatalf("%s: the quiet hash folded in at pass %d was planned in pass %d (0: never), want by pass %d (0: never overdue)",
				name, folded, got, want)
		}
	}
}

func indexOf(states []schema.State, h schema.Hash) int {
	for i := range states {
		if states[i].InfoHash == h {
			return i
		}
	}
	panic(fmt.Sprintf("no state for %x", h))
}
