package schedule

import (
	"errors"
	"fmt"
	"math"

	"github.com/infohash/infohash/formats/schema"
)

// ErrFetched is returned by ApplyFailure for a hash whose metadata is
// already fetched: fetched is final and a failure never undoes it.
var ErrFetched = errors.New("metadata already fetched")

// ApplyFailure is ApplyFailureFrom with one new source when distinctSource
// (the peer behind a bad-metadata or too_large failure is not one that
// did so before) and none otherwise.
func ApplyFailure(p Policy, st *schema.State, class string, attemptedAt int64, distinctSource bool) error {
	var n int32
	if distinctSource {
		n = 1
	}
	return ApplyFailureFrom(p, st, class, attemptedAt, n)
}

// ApplyFailureFrom records a failed fetch attempt of class (a failure
// outcome of formats/schema) made at attemptedAt. newSources is how many
// distinct peers behind a bad-metadata (hash_mismatch, invalid_metadata)
// or too_large failure were not among the ones that did so before; it is
// ignored for other classes.
//
// It counts the attempt (except local_error), moves the backoff step as the
// class's rule says (see the package documentation), sets last_attempt,
// last_failure and with it last_failure_at (the attempt's time), sets
// next_retry = attemptedAt + delay × jitter, marks the metadata failed and
// clears the lease. A local error on a never-tried hash leaves it "new":
// it was never really tried.
//
// last_failure is the last counted failure: a local error on a hash that
// already failed leaves it as it was, so the rule for "a second soft
// failure in a row" reads the counted failure before it (local errors
// in between are our own fault and neither break nor make such a run).
// A never-tried hash has no counted failure to keep and shows local_error.
//
// It knows nothing of how many of the peers found the attempt tried, so a
// peer-level failure, or a bad-metadata one short of proving the hash bad,
// after a soft one backs off (ApplyResultFailure knows).
//
// Callers apply a result only while it holds the state's lease (merge);
// ApplyFailure itself refuses only unknown classes and fetched hashes.
func ApplyFailureFrom(p Policy, st *schema.State, class string, attemptedAt int64, newSources int32) error {
	return applyFailure(p, st, class, attemptedAt, newSources, false)
}

// ApplyResultFailure is ApplyFailureFrom for failed result r, whose
// outcome is the class and attempted_at the time, and which also says how
// many peers the attempt found and tried: a peer-level failure, or a
// bad-metadata one short of proving the hash bad, after a soft failure
// backs the hash off only when r tried every peer it found (leftUntried).
// merge applies failures through it.
func ApplyResultFailure(p Policy, st *schema.State, r *schema.Result, newSources int32) error {
	return applyFailure(p, st, r.Outcome, r.AttemptedAt, newSources, leftUntried(r.PeersFound, r.PeersTried))
}

// leftUntried reports whether an attempt that found found peers it could
// dial (peers_found) and had the answer of tried of them (peers_tried:
// fetch counts no peer its job's deadline cut off mid-exchange, nor one
// it stopped) left some untried: its time ran out first. fetch ranks a peer's class above the
// job's timeout, so such an attempt says e.g. rejected or hash_mismatch
// although the swarm may hold peers that serve the hash (invalid_metadata
// whose bytes match the infohash also stops the attempt: see applyFailure).
// A peer-level or bad-metadata failure dials at least one peer (all found
// skipped as bad sources is peers_found 0), so tried 0 or less is no count
// fetch writes: unknown (a null reads as 0), taken as every peer tried,
// the rule before results were read for it.
func leftUntried(found, tried int32) bool { return tried > 0 && tried < found }

// applyFailure is ApplyFailureFrom; untried: the attempt left found peers
// undialled (leftUntried).
func applyFailure(p Policy, st *schema.State, class string, attemptedAt int64, newSources int32, untried bool) error {
	kind := KindOf(class)
	if kind == KindUnknown {
		return fmt.Errorf("schedule: %s: unknown failure class %q", schema.Hex(st.InfoHash), class)
	}
	if kind == KindDeferred {
		return fmt.Errorf("schedule: %s: %s is no failure (ApplyDeferral)", schema.Hex(st.InfoHash), class)
	}
	if st.MetadataStatus == schema.StatusFetched {
		return fmt.Errorf("schedule: %s: %s: %w", schema.Hex(st.InfoHash), class, ErrFetched)
	}
	prev := ""
	if st.MetadataStatus == schema.StatusFailed {
		prev = st.LastFailure
	}
	var delay Duration
	escalate := func() {
		delay = pick(p.Backoff[class], st.BackoffStep)
		st.BackoffStep = inc(st.BackoffStep)
	}
	switch kind {
	case KindLocal:
		delay = p.RetrySoon
	case KindSwarm:
		escalate()
	case KindPeer:
		// After a soft failure, an attempt that tried every peer it found
		// and failed shows every reachable peer bad: the swarm's step.
		// One that left found peers undialled is retried soon, as a first.
		if soft(prev) && !untried {
			escalate()
		} else {
			delay = p.RetrySoon
		}
	case KindBadMetadata, KindTooLarge:
		distinct := newSources > 0
		// Proven before this failure: enough distinct sources already.
		proven := st.BadMetadata >= p.BadMetadata.Sources
		for range max(newSources, 0) {
			st.BadMetadata = inc(st.BadMetadata)
		}
		switch {
		case (distinct || proven) && st.BadMetadata >= p.BadMetadata.Sources && kind == KindTooLarge:
			escalate() // the hash's metadata is too large: backoff.too_large
		case distinct && st.BadMetadata >= p.BadMetadata.Sources:
			delay = pick(p.BadMetadata.Long, st.BadMetadata-p.BadMetadata.Sources)
			st.BackoffStep = inc(st.BackoffStep)
		case proven:
			// A known source again (its penalty over, dialled again):
			// no new evidence, and the hash stays proven bad. It waits
			// its long delay, or its schedule's step if that is longer,
			// never less: retries of a bad hash only grow rarer.
			long := pick(p.BadMetadata.Long, st.BadMetadata-p.BadMetadata.Sources)
			escalate()
			delay = max(delay, long)
		case soft(prev) && kind == KindBadMetadata && !untried:
			// After a soft failure, bad metadata from an attempt that
			// tried every peer it found: no reachable peer served good
			// metadata, the schedule's step. One that left found peers
			// undialled (fetch dials on after a peer's bad metadata, so
			// the job's time can cut it) is retried soon, below: the
			// peer is penalised and other peers are left to try. An
			// invalid_metadata whose bytes match the infohash stops the
			// attempt itself (every peer serves the same), so it reads
			// as untried too: retried soon; merge counts each such
			// failure, which names no peer, as a new source, so the
			// next proves the hash bad (by default: the cases above).
			escalate()
		default:
			// Short of bad_metadata.sources distinct sources, and no
			// bad metadata after a soft failure from an attempt that
			// tried every peer it found: retried soon. A too_large
			// claim never moves the step here, even after a soft
			// failure: one peer's unchecked claim says nothing of the
			// hash. Merge penalises the endpoint, so the next
			// attempt dials other peers; one that finds only penalised
			// ones is peers_penalised (ApplyDeferral: deferred to the
			// first penalty's end, no attempt, no step), and a
			// peer-level failure of another peer after this soft one,
			// every peer found tried, moves the hash along its schedule
			// (KindPeer above).
			delay = p.RetrySoon
		}
	}
	if (kind == KindSwarm || kind == KindPeer) && st.BadMetadata >= p.BadMetadata.Sources {
		// Proven bad (and not fetched since): a swarm or peer failure
		// after its long wait (typically "rejected": the peers found
		// were its known bad sources, still penalised) is no news about
		// the metadata. It waits its long delay again, or its step if
		// longer: retries of a bad hash only grow rarer.
		delay = max(delay, pick(p.BadMetadata.Long, st.BadMetadata-p.BadMetadata.Sources))
	}
	if kind != KindLocal {
		st.Attempts = inc(st.Attempts)
		st.MetadataStatus = schema.StatusFailed
	} else if st.MetadataStatus != schema.StatusNew {
		st.MetadataStatus = schema.StatusFailed
	}
	st.LastAttempt = attemptedAt
	if kind != KindLocal || prev == "" {
		st.LastFailure, st.LastFailureAt = class, attemptedAt
	}
	st.NextRetry = attemptedAt + jitteredMillis(p, delay, st.InfoHash, st.Attempts)
	st.LeaseID, st.LeaseUntil = "", 0
	return nil
}

// ApplySuccess records a fetch that returned verified metadata at
// fetchedAt: the hash is fetched (final), the attempt counted, the lease
// and the retry cleared, the backoff and bad-metadata counts reset, and the
// hash hot.
func ApplySuccess(st *schema.State, fetchedAt int64) {
	st.MetadataStatus = schema.StatusFetched
	st.Attempts = inc(st.Attempts)
	st.LastAttempt = fetchedAt
	st.LastFailure, st.LastFailureAt = "", 0
	st.NextRetry = 0
	st.LeaseID, st.LeaseUntil = "", 0
	st.BackoffStep = 0
	st.BadMetadata = 0
	st.Tier = schema.TierHot
}

// Delay returns the un-jittered delay of step n (0-based) of class's
// schedule; the last entry repeats. It is 0 for local_error and unknown
// classes.
func (p Policy) Delay(class string, n int32) Duration {
	return pick(p.Backoff[class], n)
}

// pick returns s[n], clamped to the list's ends (0 for an empty list).
func pick(s []Duration, n int32) Duration {
	if len(s) == 0 {
		return 0
	}
	if n < 0 {
		n = 0
	}
	if int(n) >= len(s) {
		return s[len(s)-1]
	}
	return s[n]
}

// inc adds one without overflowing.
func inc(n int32) int32 {
	if n == math.MaxInt32 {
		return n
	}
	return n + 1
}
