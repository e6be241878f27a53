package schedule

import (
	"cmp"
	"math"

	"github.com/infohash/infohash/formats/schema"
)

// Reason says why a due hash is planned (the job's reason column):
// cold for the cold tier, reactivated when a sighting pulled its
// next_retry forward after its last attempt (reactivated_at, which
// Reactivate sets only then: a failed hash, or a never-tried one merge
// deferred), new for another never-tried hash, retry otherwise; a cold
// hash a sighting made hot without moving its retry is a retry (or new).
func Reason(st *schema.State) string {
	switch {
	case st.Tier == schema.TierCold:
		return schema.ReasonCold
	case st.Reactivated != 0 && st.Reactivated > st.LastAttempt:
		return schema.ReasonReactivated
	case st.MetadataStatus == schema.StatusNew:
		return schema.ReasonNew
	}
	return schema.ReasonRetry
}

// Priority orders due hashes of one pool (new, retry or cold; the planner
// splits --limit between pools first, see PlanRule). Compare puts first:
//
//  1. reactivated hashes (fresh evidence the swarm is back);
//  2. starved hashes, the longest waiting first (then 5.): a failed
//     hash due for longer than the delay it was last given (Starved),
//     and a never-tried cold hash (coldUntried);
//  3. higher activity: log2 of the state's activity decayed to the
//     planning time with p.Plan.ActivityHalfLife, in whole steps, so that
//     small differences do not outweigh what follows;
//  4. fewer counted attempts;
//  5. longer waiting: earlier next_retry, or first_seen for a hash never
//     scheduled;
//  6. a seeded hash of the infohash, so that ties do not favour low
//     prefixes and a run with the same seed picks the same hashes.
//
// Without 2., a backlog of retries (more due than --limit takes, pass
// after pass) would starve the hashes seen longest ago for ever: their
// activity only decays while they wait, and a hash never retried never
// reaches archive.min_attempts to go cold. With it a failed hash waits
// at most its own delay past next_retry before it goes ahead of the
// busier ones, and starved hashes are taken oldest first: none waits for
// ever while passes take any retries (at up to twice its cadence when
// they take all the starved ones).
//
// The cold tier is one pool, and its never-tried hashes could starve in
// it: never Starved, they came after every long-overdue failed one, and
// under a sustained cold backlog such failed hashes never run out (each
// planned one is due again a delay later). So a never-tried cold hash
// ranks as starved, by its waiting time (next_retry: when dedup first
// folded it in, or first_seen): the cold tier is planned oldest due
// first, the never-tried hashes among the failed ones. Hashes due before
// a given one are a set that only shrinks once that one is due (a hash
// tried after it is due again later, a newly archived never-tried hash
// was folded in later), so each waits a bounded number of passes while
// the cold tier gets any job.
//
// The new pool is not ranked so: there, hashes due longer than a bound
// would (under a lasting backlog, discovery outrunning fetch) soon be
// most of the pool and take every job oldest first, the busiest fresh
// hashes none. A never-tried hot hash due for longer than
// plan.new_overdue_after is Overdue instead, which Compare ignores: the
// planner keeps plan.new_overdue_share of the new pool's jobs for the
// overdue hashes, the longest waiting first (as starved: see
// OverdueFirst), and gives the rest by Compare. Hashes due before an
// overdue one only dwindle (arrivals and deferrals are due later; a
// cold hash a sighting makes hot again was folded in before it, and is
// taken once), so each waits a bounded number of passes while the new
// pool gets any job.
type Priority struct {
	Reactivated bool
	Starved     bool
	Overdue     bool
	Activity    int32
	Attempts    int32
	Since       int64
	Tie         uint64
}

// minActivity is the activity step of a hash never active.
const minActivity = math.MinInt32

// PriorityOf computes st's priority at now; seed feeds the tie-break.
func PriorityOf(p Policy, st *schema.State, now int64, seed uint64) Priority {
	since := st.NextRetry
	if since == 0 {
		since = st.FirstSeen
	}
	return Priority{
		Reactivated: Reason(st) == schema.ReasonReactivated,
		Starved:     Starved(st, now) || coldUntried(st),
		Overdue:     Overdue(p, st, now),
		Activity:    activityStep(st.Activity, now-st.LastSeen, millis(p.Plan.ActivityHalfLife)),
		Attempts:    st.Attempts,
		Since:       since,
		Tie:         hashKey(st.InfoHash, 0, seed^tieDomain),
	}
}

// Starved reports whether failed hash st has been due at now for longer
// than the delay it was last given (next_retry - last_attempt): the
// planner then ranks it by its waiting time, ahead of activity (see
// Priority). Never-tried hashes are not: the new pool has its share.
func Starved(st *schema.State, now int64) bool {
	if st.MetadataStatus != schema.StatusFailed || st.NextRetry == 0 {
		return false
	}
	return now-st.NextRetry > max(st.NextRetry-st.LastAttempt, 0)
}

// Overdue reports whether never-tried hot hash st, not reactivated, has
// been due at now for longer than p.Plan.NewOverdueAfter (see Priority).
func Overdue(p Policy, st *schema.State, now int64) bool {
	if Reason(st) != schema.ReasonNew || st.NextRetry == 0 {
		return false
	}
	return now-st.NextRetry > millis(p.Plan.NewOverdueAfter)
}

// OverdueFirst is a's rank among overdue hashes: as a starved hash's,
// the longest waiting first.
func (a Priority) OverdueFirst() Priority {
	a.Starved = true
	return a
}

// coldUntried reports whether st is a never-tried hash in the cold
// tier, which ranks as starved (see Priority).
func coldUntried(st *schema.State) bool {
	return st.Tier == schema.TierCold && st.MetadataStatus == schema.StatusNew
}

// activityStep is floor(log2(activity · 2^(−age/halfLife))), clamped.
func activityStep(activity float64, age, halfLife int64) int32 {
	if !(activity > 0) || halfLife <= 0 {
		return minActivity
	}
	v := math.Log2(activity) - float64(max(age, 0))/float64(halfLife)
	if !(v >= -1e6) {
		return -1e6
	}
	return int32(math.Floor(min(v, 1e6)))
}

// Compare is negative when a goes before b, positive when after, 0 only
// for equal priorities.
func (a Priority) Compare(b Priority) int {
	if a.Reactivated != b.Reactivated {
		if a.Reactivated {
			return -1
		}
		return 1
	}
	if a.Starved != b.Starved {
		if a.Starved {
			return -1
		}
		return 1
	}
	if a.Starved { // both: the longest waiting first
		if c := cmp.Compare(a.Since, b.Since); c != 0 {
			return c
		}
		return cmp.Compare(a.Tie, b.Tie)
	}
	if c := cmp.Compare(b.Activity, a.Activity); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Attempts, b.Attempts); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Since, b.Since); c != 0 {
		return c
	}
	return cmp.Compare(a.Tie, b.Tie)
}
