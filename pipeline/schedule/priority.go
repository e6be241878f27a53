package schedule

import (
	"cmp"
	"math"

	"github.com/infohash/infohash/formats/schema"
)

// Reason says why a due hash is planned (the job's reason column):
// cold for the cold tier, new for a never-tried hash, reactivated when a
// sighting pulled its next_retry forward after its last attempt
// (reactivated_at, which Reactivate sets only then), retry otherwise; a
// cold hash a sighting made hot without moving its retry is a retry.
func Reason(st *schema.State) string {
	switch {
	case st.Tier == schema.TierCold:
		return schema.ReasonCold
	case st.MetadataStatus == schema.StatusNew:
		return schema.ReasonNew
	case st.Reactivated != 0 && st.Reactivated > st.LastAttempt:
		return schema.ReasonReactivated
	}
	return schema.ReasonRetry
}

// Priority orders due hashes of one pool (new, retry or cold; the planner
// splits --limit between pools first, see PlanRule). Compare puts first:
//
//  1. reactivated hashes (fresh evidence the swarm is back);
//  2. higher activity: log2 of the state's activity decayed to the
//     planning time with p.Plan.ActivityHalfLife, in whole steps, so that
//     small differences do not outweigh what follows;
//  3. fewer counted attempts;
//  4. longer waiting: earlier next_retry, or first_seen for a hash never
//     scheduled;
//  5. a seeded hash of the infohash, so that ties do not favour low
//     prefixes and a run with the same seed picks the same hashes.
type Priority struct {
	Reactivated bool
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
		Activity:    activityStep(st.Activity, now-st.LastSeen, millis(p.Plan.ActivityHalfLife)),
		Attempts:    st.Attempts,
		Since:       since,
		Tie:         hashKey(st.InfoHash, 0, seed^tieDomain),
	}
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
