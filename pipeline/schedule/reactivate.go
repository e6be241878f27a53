package schedule

import (
	"slices"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Reactivate is the one reactivation rule, called by dedup for every known
// hash it sees again. Pass the state as it was before this sighting
// (last_seen not yet updated) and the earliest new observation time.
//
// A hash qualifies when it is cold, or failed with a last failure listed
// in p.Reactivation.Classes, and the sighting is fresh: after the last
// attempt (which already saw the swarm as it was) and at least
// p.Reactivation.Quiet after the previous sighting. Then next_retry is
// pulled to observedAt + p.Reactivation.Delay (never pushed later), the
// hash is made hot, reactivated_at is set to observedAt and, if
// p.Reactivation.ResetSchedule, the backoff step returns to 0. The lease,
// if any, is left alone.
//
// It reports whether the state changed; calling it again for the same or
// a later sighting without a new attempt in between changes nothing more.
func Reactivate(p Policy, st *schema.State, observedAt int64) bool {
	cold := st.Tier == schema.TierCold
	failed := st.MetadataStatus == schema.StatusFailed && slices.Contains(p.Reactivation.Classes, st.LastFailure)
	if !cold && !failed {
		return false
	}
	if observedAt <= st.LastAttempt {
		return false
	}
	if st.LastSeen != 0 && observedAt-st.LastSeen < millis(p.Reactivation.Quiet) {
		return false
	}
	changed := false
	if target := observedAt + millis(p.Reactivation.Delay); failed && st.NextRetry > target {
		st.NextRetry = target
		changed = true
	}
	if cold {
		st.Tier = schema.TierHot
		changed = true
	}
	if changed {
		st.Reactivated = observedAt
		if p.Reactivation.ResetSchedule {
			st.BackoffStep = 0
		}
	}
	return changed
}

// ShouldArchive reports whether a hot hash is past the policy's cold
// threshold at now: failed, at least p.Archive.MinAttempts counted
// attempts, no observation for p.Archive.Unseen, and no live lease.
// Archiving moves the hash to the cold tier; it is never deleted.
func ShouldArchive(p Policy, st *schema.State, now int64) bool {
	return st.Tier != schema.TierCold &&
		st.MetadataStatus == schema.StatusFailed &&
		st.Attempts >= p.Archive.MinAttempts &&
		now-st.LastSeen >= millis(p.Archive.Unseen) &&
		!Leased(st, now)
}

// Leased reports whether st holds a lease that is still live at now.
func Leased(st *schema.State, now int64) bool {
	return st.LeaseID != "" && st.LeaseUntil > now
}

// Due reports whether st may be planned at now: metadata not fetched,
// next_retry null or reached, and no live lease. The blocklist and the
// tier are the planner's to check.
func Due(st *schema.State, now int64) bool {
	return st.MetadataStatus != schema.StatusFetched &&
		st.NextRetry <= now &&
		!Leased(st, now)
}

// millis converts a policy duration to schema milliseconds.
func millis(d Duration) int64 { return int64(time.Duration(d) / time.Millisecond) }
