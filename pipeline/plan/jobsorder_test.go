package plan

import (
	"math"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// jobPool is the pool a planned job was taken from (poolOf): a
// reactivated job of attempt 1 was never tried, and came from the new
// pool.
func jobPool(j schema.Job) int {
	switch {
	case j.Reason == schema.ReasonCold:
		return poolCold
	case j.Reason == schema.ReasonNew, j.Reason == schema.ReasonReactivated && j.Attempt == 1:
		return poolNew
	}
	return poolRetry
}

// checkPrefixShares fails t unless every prefix of jobs holds each
// pool's share of the whole list within one job: of the first k jobs,
// pool i's count is within 1 of k × (pool i's jobs) / len(jobs). A
// fetch that stops after any number of jobs (--deadline) has then
// attempted about each pool's share of them.
func checkPrefixShares(t *testing.T, jobs []schema.Job) {
	t.Helper()
	var total, seen [3]int
	for _, j := range jobs {
		total[jobPool(j)]++
	}
	for k, j := range jobs {
		seen[jobPool(j)]++
		for i := range seen {
			want := float64((k+1)*total[i]) / float64(len(jobs))
			if math.Abs(float64(seen[i])-want) >= 1 {
				t.Fatalf("the first %d of %d jobs hold %v by pool (new, retry, cold), want %v × %d/%d each, ±1; pool %d: %d",
					k+1, len(jobs), seen, total, k+1, len(jobs), i, seen[i])
			}
		}
	}
}

// TestJobsOrderKeepsSharesInEveryPrefix: plan-retries writes the jobs
// interleaved by the pools' shares, each pool best first, so that a
// fetch cut short after any number of jobs (its --deadline releases the
// rest) has attempted each pool's share of them. Written best first
// across the pools, the starved retries came before every new hash: a
// probe of 1000 starved retries and 300 new hashes at --limit 100
// planned 50 of each, the first new job 51st, and a pass cut after 50
// jobs released all the new ones.
func TestJobsOrderKeepsSharesInEveryPrefix(t *testing.T) {
	now := ms(t0) + 60*day
	third := 1.0 / 3
	for _, tc := range []struct {
		name                         string
		limit                        int
		newShare                     float64
		coldShare                    float64
		nNew, nRetry, nReact, nCold  int
		wantNew, wantRetry, wantCold int // jobs planned by pool
	}{
		{"probe: starved retries before new", 100, 0.5, 0.02, 300, 1000, 0, 0, 50, 50, 0},
		{"three pools", 60, 0.5, 0.2, 80, 80, 10, 40, 30, 18, 12},
		{"a third new", 31, third, 0.02, 40, 40, 5, 0, 11, 20, 0},
		{"few new", 40, 0.5, 0.02, 5, 100, 3, 0, 5, 35, 0},
		{"new and cold only", 25, 0.8, 0.5, 40, 0, 0, 40, 20, 0, 5},
		{"limit 3", 3, 0.5, 0.1, 10, 10, 0, 10, 2, 0, 1},
		{"limit 7", 7, 0.1, 0.2, 10, 10, 2, 10, 1, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule.Default()
			p.Plan.ColdShare, p.Plan.ColdPartitions = tc.coldShare, 256 // every cold file read
			var states []schema.State
			n := uint64(0)
			add := func(count int, make func(h schema.Hash, i int) schema.State) {
				for i := range count {
					n++
					states = append(states, make(hashAt(byte(n%200), n), i))
				}
			}
			add(tc.nNew, func(h schema.Hash, i int) schema.State { // busy, due now
				st := newHash(h, now-hour)
				st.Activity = float64(8 + i%5)
				return st
			})
			add(tc.nRetry, func(h schema.Hash, i int) schema.State { // starved: failed a month ago
				st := failedHash(t, h, now-40*day, now-30*day-int64(i)*minute)
				st.Activity = float64(i % 3)
				return st
			})
			add(tc.nReact, func(h schema.Hash, i int) schema.State { // reactivated: first of all by priority
				st := failedHash(t, h, now-40*day, now-2*day)
				st.LastSeen, st.Reactivated = now-hour, now-hour
				return st
			})
			add(tc.nCold, func(h schema.Hash, i int) schema.State {
				st := failedHash(t, h, now-90*day, now-60*day-int64(i)*minute)
				st.Tier = schema.TierCold
				return st
			})
			dir := makeDataset(t, states, nil)
			if err := schedule.Save(dir, p); err != nil {
				t.Fatal(err)
			}
			share := tc.newShare
			jobs, st := runPlan(t, dir, now, tc.limit, func(o *Options) { o.NewShare = &share })
			gotRetry := st.PlannedRetry + st.PlannedReactivated
			if st.PlannedNew != tc.wantNew || gotRetry != tc.wantRetry || st.PlannedCold != tc.wantCold {
				t.Fatalf("planned new %d, retry %d, cold %d; want %d, %d, %d (the pass's quota)",
					st.PlannedNew, gotRetry, st.PlannedCold, tc.wantNew, tc.wantRetry, tc.wantCold)
			}
			checkPrefixShares(t, jobs)
			// Within a pool the jobs stay best first: the reactivated
			// ones lead the retries.
			var retries []string
			for _, j := range jobs {
				if jobPool(j) == poolRetry {
					retries = append(retries, j.Reason)
				}
			}
			for i, r := range retries {
				if want := i < tc.nReact; (r == schema.ReasonReactivated) != want {
					t.Fatalf("retry pool's job %d is %s; want the %d reactivated ones first: %v", i, r, tc.nReact, retries)
				}
			}
		})
	}
}

// TestByShareKeepsEveryPrefix: for every mix of list lengths up to 24,
// byShare yields each candidate once, each list in its own order, and
// of the first k yielded holds k × (list i's length) / total of list i
// within one, whatever k. A tie goes to the list whose next candidate
// is better.
func TestByShareKeepsEveryPrefix(t *testing.T) {
	const most = 24
	for a := range most + 1 {
		for b := range most + 1 {
			for cc := range most + 1 {
				var lists [3][]cand
				for i, n := range [3]int{a, b, cc} {
					for k := range n {
						lists[i] = append(lists[i], cand{prio: schedule.Priority{Tie: uint64(k)}, pool: uint8(i)})
					}
				}
				l := &jobList{lists: lists, n: a + b + cc}
				var seen [3]int
				k := 0
				for g := range byShare(lists) {
					k++
					c := l.at(g)
					i := int(c.pool)
					if int(c.prio.Tie) != seen[i] {
						t.Fatalf("lengths %d,%d,%d: list %d's candidate %d yielded as its %d-th", a, b, cc, i, c.prio.Tie, seen[i])
					}
					seen[i]++
					for i, n := range [3]int{a, b, cc} {
						if d := float64(seen[i]) - float64(k*n)/float64(l.n); d <= -1 || d >= 1 {
							t.Fatalf("lengths %d,%d,%d: the first %d hold %v, list %d off its share by %.2f", a, b, cc, k, seen, i, d)
						}
					}
				}
				if k != l.n {
					t.Fatalf("lengths %d,%d,%d: %d yielded, want %d", a, b, cc, k, l.n)
				}
			}
		}
	}
	// Equal shares: the better next candidate goes first.
	better := [3][]cand{
		{{prio: schedule.Priority{Activity: 1}}, {prio: schedule.Priority{Activity: 1}}},
		{{prio: schedule.Priority{Reactivated: true}}, {prio: schedule.Priority{Activity: 9}}},
	}
	var got []int32
	for g := range byShare(better) {
		got = append(got, g)
	}
	if want := []int32{2, 0, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("two lists of two, the second's first reactivated: order %v, want %v", got, want)
	}
}
