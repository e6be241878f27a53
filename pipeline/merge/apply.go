package merge

import (
	"slices"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// verdict is what merge did with one result.
type verdict int

const (
	stored       verdict = iota // ok: metadata stored, hash fetched
	lateStored                  // ok after its lease moved on: stored all the same
	duplicateOK                 // ok for a hash already fetched: nothing to do
	applied                     // failure applied to the schedule
	lateFailure                 // failure whose lease moved on: ignored
	staleFailure                // unleased failure not newer than the last attempt: ignored
	afterFetched                // failure of a hash already fetched: ignored
)

// maxAvoid bounds a hash's avoid_peers list.
const maxAvoid = 16

// applyResult folds result r into st. lease is the hash's current lease
// (nil if none): the result counts only if it was planned under that
// lease (an unleased result, lease_id null, counts when the hash has no
// lease and the attempt is newer than the last one recorded). It reports
// what it did and whether the lease is used up.
func applyResult(p schedule.Policy, st *schema.State, r *schema.Result, lease *schema.Lease) (v verdict, release bool) {
	matches := (lease != nil && lease.LeaseID == r.LeaseID) || (lease == nil && r.LeaseID == "")
	if r.Outcome == schema.OutcomeOK {
		if st.MetadataStatus == schema.StatusFetched {
			return duplicateOK, lease != nil
		}
		schedule.ApplySuccess(st, r.AttemptedAt)
		st.AvoidPeers = nil
		if matches {
			return stored, lease != nil
		}
		return lateStored, lease != nil // fetched: whatever lease it had is moot
	}
	switch {
	case st.MetadataStatus == schema.StatusFetched:
		return afterFetched, lease != nil
	case !matches:
		return lateFailure, false
	case lease == nil && r.AttemptedAt <= st.LastAttempt:
		return staleFailure, false
	}
	if err := schedule.ApplyFailureFrom(p, st, r.Outcome, r.AttemptedAt, newSources(st, r)); err != nil {
		return afterFetched, lease != nil // unreachable: classes are checked on input, fetched above
	}
	addAvoid(p, st, r)
	return applied, lease != nil
}

// newSources counts the distinct peers behind a bad-metadata or too_large
// failure (peer_failures of any of those classes: hash_mismatch,
// invalid_metadata, too_large, whichever the outcome is) that are not
// already known to have failed this hash (on its avoid list). A result
// naming no such peer counts as one source.
func newSources(st *schema.State, r *schema.Result) int32 {
	var seen []string
	named := false
	for _, pf := range r.PeerFailures {
		if !badSource(pf.Class) {
			continue
		}
		named = true
		if !slices.Contains(st.AvoidPeers, pf.Addr) && !slices.Contains(seen, pf.Addr) {
			seen = append(seen, pf.Addr)
		}
	}
	if !named {
		return 1
	}
	return int32(len(seen))
}

// badSource reports whether a peer failing with class served bad metadata
// or claimed metadata too large: the failures bad_metadata counts.
func badSource(class string) bool {
	k := schedule.KindOf(class)
	return k == schedule.KindBadMetadata || k == schedule.KindTooLarge
}

// addAvoid appends the endpoints that failed this attempt with a
// penalising class to the hash's avoid list (most recent last, at most
// maxAvoid).
func addAvoid(p schedule.Policy, st *schema.State, r *schema.Result) {
	for _, pf := range r.PeerFailures {
		if p.PeerPenalty.Base[pf.Class] <= 0 || pf.Addr == "" {
			continue
		}
		if i := slices.Index(st.AvoidPeers, pf.Addr); i >= 0 {
			st.AvoidPeers = slices.Delete(st.AvoidPeers, i, i+1)
		}
		st.AvoidPeers = append(st.AvoidPeers, pf.Addr)
	}
	if n := len(st.AvoidPeers); n > maxAvoid {
		st.AvoidPeers = slices.Clone(st.AvoidPeers[n-maxAvoid:])
	}
}

// pruneAvoid keeps the endpoints whose penalty is still live at now.
func pruneAvoid(st *schema.State, peers map[string]schema.PeerPenalty, now int64) {
	if len(st.AvoidPeers) == 0 {
		return
	}
	st.AvoidPeers = slices.DeleteFunc(st.AvoidPeers, func(a string) bool {
		pp, ok := peers[a]
		return !ok || !schedule.Avoided(pp, now)
	})
}
