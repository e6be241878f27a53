package schedule

import (
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestPriorityOrder(t *testing.T) {
	p := Default()
	now := t0 + day + 2*hour // hashes due at t0+day after a day's delay: not starved
	mk := func(n uint64, edit func(st *schema.State)) schema.State {
		st := newState(n)
		st.MetadataStatus, st.LastAttempt, st.NextRetry, st.Attempts = schema.StatusFailed, t0, t0+day, 2
		st.Activity, st.LastSeen = 1, t0
		if edit != nil {
			edit(&st)
		}
		return st
	}
	// Listed in the expected order.
	states := []schema.State{
		mk(1, func(st *schema.State) { st.Reactivated = t0 + 2*day; st.Activity = 0 }),
		// Starved (due for longer than their 1h delay): the longest waiting
		// first, however idle or often tried.
		mk(9, func(st *schema.State) { st.NextRetry, st.Activity, st.Attempts = t0+hour, 0, 9 }),
		mk(10, func(st *schema.State) { st.LastAttempt, st.NextRetry, st.Activity = t0+hour, t0+2*hour, 64 }),
		mk(2, func(st *schema.State) { st.Activity, st.LastSeen = 64, now }),
		mk(3, func(st *schema.State) { st.Activity, st.LastSeen = 64, now-day }), // one half-life: 32
		mk(4, func(st *schema.State) { st.Attempts = 1 }),
		mk(5, func(st *schema.State) { st.NextRetry = t0 + 20*hour }), // due 6h after a 20h delay
		mk(6, nil),
		mk(7, func(st *schema.State) { st.Attempts = 9 }),
		mk(8, func(st *schema.State) { st.Activity = 0 }),
	}
	prio := make([]Priority, len(states))
	for i := range states {
		prio[i] = PriorityOf(p, &states[i], now, 1)
	}
	for i := 1; i < len(prio); i++ {
		if prio[i-1].Compare(prio[i]) >= 0 {
			t.Errorf("hash %d does not go before hash %d: %+v vs %+v", i, i+1, prio[i-1], prio[i])
		}
		if prio[i].Compare(prio[i-1]) <= 0 {
			t.Errorf("Compare is not antisymmetric for %d, %d", i, i+1)
		}
	}
	if prio[3].Activity != 6 || prio[4].Activity != 5 {
		t.Errorf("activity steps %d, %d; want 6 (64 now) and 5 (64 a half-life ago)", prio[3].Activity, prio[4].Activity)
	}
}

func TestStarved(t *testing.T) {
	failed := func(last, next int64) schema.State {
		st := newState(1)
		st.MetadataStatus, st.LastAttempt, st.NextRetry, st.Attempts = schema.StatusFailed, last, next, 3
		return st
	}
	for _, tc := range []struct {
		name string
		st   schema.State
		now  int64
		want bool
	}{
		{"not yet due", failed(t0, t0+day), t0 + hour, false},
		{"due for less than its delay", failed(t0, t0+day), t0 + 2*day - hour, false},
		{"due for exactly its delay", failed(t0, t0+day), t0 + 2*day, false},
		{"due for longer than its delay", failed(t0, t0+day), t0 + 2*day + 1, true},
		{"never tried", newState(1), t0 + 400*day, false},
		{"fetched", func() schema.State { st := failed(t0, t0+day); st.MetadataStatus = schema.StatusFetched; return st }(), t0 + 400*day, false},
		{"next_retry before last_attempt", failed(t0, t0-hour), t0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Starved(&tc.st, tc.now); got != tc.want {
				t.Errorf("Starved = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTieBreakIsUnbiased: among otherwise equal hashes, the first tenth by
// priority is not drawn from low prefixes, and the seed changes the pick.
func TestTieBreakIsUnbiased(t *testing.T) {
	p := Default()
	const n = 4096
	order := func(seed uint64) []int {
		idx := make([]int, n)
		prio := make([]Priority, n)
		for i := range n {
			st := newState(0)
			st.InfoHash[0] = byte(i / 16) // prefixes 00..ff, 16 hashes each
			st.InfoHash[1] = byte(i % 16)
			prio[i] = PriorityOf(p, &st, t0, seed)
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return prio[a].Compare(prio[b]) })
		return idx[:n/10]
	}
	first := order(1)
	low := 0
	for _, i := range first {
		if i/16 < 128 {
			low++
		}
	}
	if low < len(first)*40/100 || low > len(first)*60/100 {
		t.Errorf("%d of the first %d picks have a prefix below 0x80; want about half", low, len(first))
	}
	if slices.Equal(first, order(2)) {
		t.Errorf("another seed picked the same hashes in the same order")
	}
	if !slices.Equal(first, order(1)) {
		t.Errorf("the same seed picked differently")
	}
}

func TestReason(t *testing.T) {
	st := newState(1)
	if Reason(&st) != schema.ReasonNew {
		t.Errorf("new hash: %s", Reason(&st))
	}
	_ = ApplyFailure(Default(), &st, schema.OutcomeNoPeers, t0, false)
	if Reason(&st) != schema.ReasonRetry {
		t.Errorf("failed hash: %s", Reason(&st))
	}
	st.Tier = schema.TierCold
	if Reason(&st) != schema.ReasonCold {
		t.Errorf("cold hash: %s", Reason(&st))
	}
}

func TestOverdue(t *testing.T) {
	p := Default() // plan.new_overdue_after 7d
	fresh := func(edit func(st *schema.State)) schema.State {
		st := newState(1)
		st.NextRetry = t0
		if edit != nil {
			edit(&st)
		}
		return st
	}
	for _, tc := range []struct {
		name  string
		st    schema.State
		now   int64
		after Duration
		want  bool
	}{
		{"due for 7 days", fresh(nil), t0 + 7*day, p.Plan.NewOverdueAfter, false},
		{"due for 7 days and a millisecond", fresh(nil), t0 + 7*day + 1, p.Plan.NewOverdueAfter, true},
		{"not yet due", fresh(nil), t0 - day, p.Plan.NewOverdueAfter, false},
		{"bound 0, due", fresh(nil), t0 + 1, 0, true},
		{"bound 0, due now", fresh(nil), t0, 0, false},
		{"failed", fresh(func(st *schema.State) {
			st.MetadataStatus, st.Attempts, st.LastAttempt = schema.StatusFailed, 1, t0-day
		}), t0 + 400*day, p.Plan.NewOverdueAfter, false},
		{"cold (the cold pool's: coldUntried)", fresh(func(st *schema.State) { st.Tier = schema.TierCold }),
			t0 + 400*day, p.Plan.NewOverdueAfter, false},
		{"reactivated (first in the new pool)", fresh(func(st *schema.State) { st.Reactivated = t0 - hour }),
			t0 + 400*day, p.Plan.NewOverdueAfter, false},
		{"never scheduled", fresh(func(st *schema.State) { st.NextRetry = 0 }), t0 + 400*day, p.Plan.NewOverdueAfter, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			q.Plan.NewOverdueAfter = tc.after
			if got := Overdue(q, &tc.st, tc.now); got != tc.want {
				t.Errorf("Overdue = %v, want %v", got, tc.want)
			}
			if prio := PriorityOf(q, &tc.st, tc.now, 1); prio.Overdue != tc.want {
				t.Errorf("PriorityOf: Overdue %v, want %v", prio.Overdue, tc.want)
			}
		})
	}
}
