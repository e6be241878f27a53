package merge

import (
	"slices"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// verdict is what merge did with one result.
type verdict int

const (
	stored        verdict = iota // ok: metadata stored, hash fetched
	lateStored                   // ok after its lease moved on: stored all the same
	duplicateOK                  // ok for a hash already fetched: nothing to do
	applied                      // failure applied to the schedule
	deferred                     // peers_penalised: retry deferred, no failure (schedule.ApplyDeferral)
	lateFailure                  // failure whose lease moved on: ignored
	staleFailure                 // unleased failure not newer than the last attempt: ignored
	afterFetched                 // failure of a hash already fetched: ignored
	releasedLease                // released row under the hash's lease: lease ended, nothing else
	staleRelease                 // released row whose lease is not (or no longer) the hash's: ignored
	numVerdicts
)

// maxAvoid bounds a hash's avoid_peers list.
const maxAvoid = 16

// applyResult folds result r into st. lease is the hash's current lease
// (nil if none): the result counts only if it was planned under that
// lease (an unleased result, lease_id null, counts when the hash has no
// lease and the attempt is newer than the last one recorded). It reports
// what it did and whether the lease is used up.
//
// A released result (fetch gave the job back unattempted) only ends the
// lease it names, and only if that lease is still the hash's: it counts
// no attempt and leaves every other column of st as it was.
func applyResult(p schedule.Policy, st *schema.State, r *schema.Result, lease *schema.Lease) (v verdict, release bool) {
	matches := (lease != nil && lease.LeaseID == r.LeaseID) || (lease == nil && r.LeaseID == "")
	if r.Outcome == schema.OutcomeReleased {
		if lease == nil || !matches {
			return staleRelease, false
		}
		if st != nil && st.LeaseID == r.LeaseID { // the state's own columns, null since leases/ holds leases
			st.LeaseID, st.LeaseUntil = "", 0
		}
		return releasedLease, true
	}
	if r.Outcome == schema.OutcomeOK {
		if st.MetadataStatus == schema.StatusFetched {
			return duplicateOK, lease != nil
		}
		dropFailedPeers(st, r)
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
	verdict := applied
	// last_attempt stays the latest attempt applied: a leased attempt
	// dated before it (its fetch host's clock behind) must not set it
	// back, or an unleased result applied before would pass the check
	// above again when its rows come in another input (a cut stream sent
	// whole, a file rewritten) and count twice.
	latest := st.LastAttempt
	if schedule.KindOf(r.Outcome) == schedule.KindDeferred {
		// Nobody was dialled: no peer failed, no source, no penalty.
		if err := schedule.ApplyDeferral(p, st, r.AttemptedAt, r.RetryAfter); err != nil {
			return afterFetched, lease != nil // unreachable: retry_after is checked on input, fetched above
		}
		verdict = deferred
	} else if err := applyFailure(p, st, r); err != nil {
		return afterFetched, lease != nil // unreachable: classes are checked on input, fetched above
	}
	st.LastAttempt = max(st.LastAttempt, latest)
	// A sighting dedup folded in after this attempt (while the job was
	// out) could pull nothing then: the hash was due. It is fresh against
	// the failure (or deferral) just applied: the reactivation rule takes
	// it now, as dedup would after this merge (and unionState for a later
	// last_seen).
	if st.LastSeen > r.AttemptedAt {
		schedule.Reactivate(p, st, st.LastSeen, schedule.LastAnnounce(st))
	}
	return verdict, lease != nil
}

// applyFailure applies r's failure class to st: the schedule (which also
// reads r's peers_found and peers_tried: schedule.ApplyResultFailure), the
// peers it failed with and the endpoints to avoid (or, once bad
// metadata came, the sources).
func applyFailure(p schedule.Policy, st *schema.State, r *schema.Result) error {
	if schedule.KindOf(r.Outcome) != schedule.KindLocal {
		dropFailedPeers(st, r)
	}
	hadSources := st.BadMetadata > 0
	if err := schedule.ApplyResultFailure(p, st, r, newSources(st, r)); err != nil {
		return err
	}
	switch {
	case st.BadMetadata == 0:
		addAvoid(p, st, r)
	case !hadSources: // the first source: the list holds sources from now on
		st.AvoidPeers = nil
		addSources(st, r)
	default:
		addSources(st, r)
	}
	return nil
}

// dropFailedPeers removes from the hash's peers (announced endpoints,
// which plan-retries hands its jobs) every endpoint r's attempt failed
// with a peer-level class (peerLevel). applyResult calls it only for an
// attempt that counts (stored, or a failure applied that is not
// local_error): a late, stale or local result says nothing about the
// endpoint now (a peer that announces the hash again comes back with
// dedup). A penalised endpoint is in avoid_peers; the peers list is only
// what may be worth dialling. peers_at stays while an endpoint does
// (the newest announcement of those kept is no later), and goes with the
// last one (null: no peers).
func dropFailedPeers(st *schema.State, r *schema.Result) {
	if len(st.Peers) == 0 || len(r.PeerFailures) == 0 {
		return
	}
	st.Peers = slices.DeleteFunc(slices.Clone(st.Peers), func(a string) bool {
		return slices.ContainsFunc(r.PeerFailures, func(pf schema.PeerFailure) bool { return pf.Addr == a && peerLevel(pf.Class) })
	})
	if len(st.Peers) == 0 {
		st.PeersAt = 0
	}
}

// peerLevel reports whether class is one a peer can fail with (fetch's
// peer failure classes): every failure class but no_peers (no peer to
// blame) and local_error (ours: it says nothing about the endpoint).
// peer_lacks_torrent is one: that peer does not serve this hash.
func peerLevel(class string) bool {
	k := schedule.KindOf(class)
	return k != schedule.KindUnknown && k != schedule.KindLocal && k != schedule.KindDeferred && class != schema.OutcomeNoPeers
}

// unionPeers is the peers of the union of a and b: the list of the one
// seen last first (the newer announcements), then the other's, each once,
// at most schema.MaxStatePeers (a longer list, which no writer makes,
// is cut as dedup cuts its announcers); and its peers_at, the later of
// the known peers_at of the records that put an endpoint in it (null
// without one, or if neither is known: a record older than format 12).
func unionPeers(a, b *schema.State) (_ []string, at int64) {
	if b.LastSeen > a.LastSeen {
		a, b = b, a
	}
	out := slices.Clone(a.Peers[:min(len(a.Peers), schema.MaxStatePeers)])
	if len(out) > 0 {
		at = a.PeersAt
	}
	for _, x := range b.Peers {
		if len(out) >= schema.MaxStatePeers {
			break
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
			at = max(at, b.PeersAt)
		}
	}
	return out, at
}

// A hash's avoid_peers hold one of two things. Until a peer has served
// it bad metadata or claimed it too large (bad_metadata 0), they are the
// endpoints that failed it with a penalising class, kept while their
// penalty lasts. From the first such source until the next success
// (bad_metadata > 0), they are exactly those sources, however long ago
// their penalty ended: they are what tells a new source from one counted
// before. Either way plan-retries hands a job only the endpoints still
// penalised, and every live penalty goes to fetch in the jobs file's avoid
// list as well.

// newSources counts the sources a bad-metadata or too_large result adds:
// the distinct endpoints of its peer_failures of any of hash_mismatch,
// invalid_metadata, too_large (whichever the outcome is) that are not
// among the hash's sources counted before, or one for a result naming no
// such endpoint. Other results add none.
func newSources(st *schema.State, r *schema.Result) int32 {
	if !badSource(r.Outcome) {
		return 0
	}
	var known, seen endpointSet
	if st.BadMetadata > 0 {
		for _, a := range st.AvoidPeers {
			known.add(a)
		}
	}
	fresh := int32(0)
	named := false
	for _, pf := range r.PeerFailures {
		if !badSource(pf.Class) || pf.Addr == "" {
			continue
		}
		named = true
		if !known.has(pf.Addr) && !seen.has(pf.Addr) {
			seen.add(pf.Addr)
			fresh++
		}
	}
	if !named {
		return 1
	}
	return fresh
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
	appendEndpoints(st, r, func(class string) bool { return p.PeerPenalty.Base[class] > 0 })
}

// appendEndpoints moves the endpoints of r's peer failures whose class
// counts to the end of the hash's avoid_peers (most recent last), keeping
// the last maxAvoid. The list is cut to them whenever it passes twice
// that, so each endpoint is looked for among at most 2 x maxAvoid
// (peer_failures have no bound: a list grown to all of them was scanned
// for each, 109 s for 200,000). The last maxAvoid of a list of distinct
// endpoints, as every writer keeps it, depend only on the last maxAvoid
// before each move: the result is the same.
func appendEndpoints(st *schema.State, r *schema.Result, counts func(class string) bool) {
	for _, pf := range r.PeerFailures {
		if !counts(pf.Class) || pf.Addr == "" {
			continue
		}
		if i := slices.Index(st.AvoidPeers, pf.Addr); i >= 0 {
			st.AvoidPeers = slices.Delete(st.AvoidPeers, i, i+1)
		}
		st.AvoidPeers = append(st.AvoidPeers, pf.Addr)
		if n := len(st.AvoidPeers); n > 2*maxAvoid {
			st.AvoidPeers = slices.Clone(st.AvoidPeers[n-maxAvoid:])
		}
	}
	if n := len(st.AvoidPeers); n > maxAvoid {
		st.AvoidPeers = slices.Clone(st.AvoidPeers[n-maxAvoid:])
	}
}

// addSources moves the bad-metadata and too_large endpoints of r to the
// end of the hash's sources (most recent last, at most maxAvoid: a hash
// with more distinct sources than that forgets the oldest).
func addSources(st *schema.State, r *schema.Result) {
	if !badSource(r.Outcome) {
		return // the sources are only those newSources counted
	}
	appendEndpoints(st, r, badSource)
}

// unionAvoid is the avoid_peers of the union of a and b, whose
// bad_metadata is bad: both lists (a's first; at most maxAvoid, the last
// kept), but when bad > 0 only those of the sides that had sources: the
// other side's are penalised endpoints, not sources.
//
// Duplicates are found by an endpointSet: a scan for lists of at most
// maxAvoid, a map for longer ones (only a list no writer made: merge
// --from refuses one from the other dataset), so the check stays linear.
func unionAvoid(bad int32, a, b *schema.State) []string {
	var out []string
	var seen endpointSet
	for _, s := range []*schema.State{a, b} {
		if bad > 0 && s.BadMetadata == 0 {
			continue
		}
		for _, x := range s.AvoidPeers {
			if !seen.has(x) {
				seen.add(x)
				out = append(out, x)
			}
		}
	}
	if n := len(out); n > maxAvoid {
		out = slices.Clone(out[n-maxAvoid:])
	}
	return out
}

// pruneAvoid keeps the endpoints whose penalty is still live at now, unless
// they are the hash's bad-metadata sources (bad_metadata > 0), which stay
// until the next success.
func pruneAvoid(st *schema.State, peers map[string]schema.PeerPenalty, now int64) {
	if len(st.AvoidPeers) == 0 || st.BadMetadata > 0 {
		return
	}
	st.AvoidPeers = slices.DeleteFunc(st.AvoidPeers, func(a string) bool {
		pp, ok := peers[a]
		return !ok || !schedule.Avoided(pp, now)
	})
}
