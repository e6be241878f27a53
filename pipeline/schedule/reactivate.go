package schedule

import (
	"math"
	"slices"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Reactivate is the one reactivation rule, called by dedup for every known
// hash it sees (before or after folding the sighting into last_seen: the
// rule does not read last_seen). observedAt is the newest sighting,
// announcedAt the newest of them that was an announce_peer (0: none), a
// peer saying it holds the torrent now: evidence that outweighs the
// sightings of a hash nobody served (a get_peers is often just another
// crawler looking).
//
// A hash qualifies when it is dormant (cold; or waiting at least
// p.Reactivation.DormantAfter after its last attempt, either failed with a
// last failure in p.Reactivation.Classes, unless proven bad:
// p.BadMetadata.Sources peers have served bad metadata since the last
// success, and a sighting is no news about that, whichever failure came
// last; or never tried yet deferred: merge's peers_penalised deferral,
// which counts no attempt, leaves a hash new with its last_attempt set,
// as only a local_error also does, which waits retry_soon), the sighting
// is fresh (after the last attempt, which already saw the swarm as it
// was) and the hash was not reactivated within
// p.Reactivation.MinInterval. The sighting is observedAt; when that one
// comes within MinInterval, announcedAt instead if it comes
// p.Reactivation.AnnounceMinInterval or more after the last reactivation
// (and is fresh): a hash reactivated by a lookup and failed again is
// tried again on an announce two days later, not five days after it.
// Then a cold hash is made hot, and a waiting one (failed in Classes, or
// deferred) has next_retry pulled to the sighting + p.Reactivation.Delay
// + ReactivationOffset (never pushed later). Only a hash whose next_retry
// moved is reactivated: reactivated_at is set to the sighting (so Reason
// plans it as reactivated, first in its pool, and both intervals run from
// it) and, if
// p.Reactivation.ResetSchedule, the backoff step returns to 0. A cold
// hash whose retry does not move (its class is not in Classes, or it is
// already due sooner) is just hot again (so is a proven-bad one): its
// reactivated_at and step stay, and it is planned as a retry (or new)
// when due. A lease is left alone: the hash is planned once it ends.
//
// It reports whether the state changed (pulled forward, made hot, or
// both). Calling it again for the same or a later sighting without a new
// attempt in between changes nothing more.
//
// dedup's incremental path decodes only the columns this and its own fold
// use (pipeline/dedup foldColumns; info_hash it fills in itself): reading
// another field here means adding its column there. (announcedAt is the
// batch's, dedup's aggregate keeps it: nothing of the row.)
func Reactivate(p Policy, st *schema.State, observedAt, announcedAt int64) bool {
	r := p.Reactivation
	cold := st.Tier == schema.TierCold
	waiting := st.NextRetry-st.LastAttempt >= millis(r.DormantAfter)
	failed := st.MetadataStatus == schema.StatusFailed && slices.Contains(r.Classes, st.LastFailure) &&
		st.BadMetadata < p.BadMetadata.Sources && waiting
	deferred := st.MetadataStatus == schema.StatusNew && st.LastAttempt != 0 && waiting
	if !cold && !failed && !deferred {
		return false
	}
	at := observedAt
	if st.Reactivated != 0 && observedAt-st.Reactivated < millis(r.MinInterval) {
		if announcedAt == 0 || announcedAt-st.Reactivated < millis(r.AnnounceMinInterval) {
			return false
		}
		at = announcedAt
	}
	if at <= st.LastAttempt {
		return false
	}
	pulled := false
	if target := at + millis(r.Delay) + ReactivationOffset(p, st); (failed || deferred) && st.NextRetry > target {
		st.NextRetry = target
		pulled = true
	}
	if pulled {
		st.Reactivated = at
		if r.ResetSchedule {
			st.BackoffStep = 0
		}
	}
	if cold {
		st.Tier = schema.TierHot
	}
	return pulled || cold
}

// ReactivationOffset spreads reactivated retries over
// [0, p.Reactivation.Spread): a BEP 51 sweep or a busy capture pass that
// sights many dormant hashes at once must not make them all due at the
// same instant. The offset is drawn from a hash of (info_hash, last
// attempt, policy seed), like JitterFactor: reproducible, the same for
// every later sighting until the next attempt, different between hashes.
// (The last attempt's time stands for the attempt: dedup's incremental
// path decodes last_attempt but not attempts.)
func ReactivationOffset(p Policy, st *schema.State) int64 {
	w := millis(p.Reactivation.Spread)
	if w <= 0 {
		return 0
	}
	return int64(unitHash(st.InfoHash, uint64(st.LastAttempt), p.Seed^reactivateDomain) * float64(w))
}

// ShouldArchive reports whether a hot hash is past the policy's cold
// threshold at now, with no live lease: failed, at least
// p.Archive.MinAttempts counted attempts and no observation for
// p.Archive.Unseen; or, when p.Archive.NewUnseen is above 0, never tried
// (new) and no observation for that long; or, when
// p.Archive.FetchedUnseen is above 0, fetched and no observation for that
// long. Archiving moves the hash to the cold tier; it is never deleted.
func ShouldArchive(p Policy, st *schema.State, now int64) bool {
	if st.Tier == schema.TierCold || Leased(st, now) {
		return false
	}
	return p.Archive.Crossed(st.MetadataStatus, st.Attempts, st.LastSeen, now)
}

// ShouldArchiveDeferred reports whether a hot hash that merge has just
// deferred (peers_penalised: schedule.ApplyDeferral, no attempt counted)
// while failed goes cold now, short of p.Archive.MinAttempts: still
// failed, no live lease, and no observation for p.Archive.Unseen (0 turns
// this off). Every peer it knows is penalised and nobody has announced it
// for that long; its deferrals count no attempt, so it could stay below
// MinAttempts, and hot, for ever. The cold sweep still plans it, and a
// sighting makes it hot again.
func ShouldArchiveDeferred(p Policy, st *schema.State, now int64) bool {
	if st.Tier == schema.TierCold || Leased(st, now) || p.Archive.Unseen <= 0 {
		return false
	}
	return st.MetadataStatus == schema.StatusFailed && now-st.LastSeen >= millis(p.Archive.Unseen)
}

// Crossed reports whether a hot hash of that metadata_status, attempts
// and last_seen has crossed the archive thresholds at now: ShouldArchive
// of it when it holds no live lease. A scan that tests many rows asks it
// first of the columns it needs, and reads a row's lease only then.
func (a ArchiveRule) Crossed(status string, attempts int32, lastSeen, now int64) bool {
	switch status {
	case schema.StatusFailed:
		return attempts >= a.MinAttempts && now-lastSeen >= millis(a.Unseen)
	case schema.StatusNew:
		return a.NewUnseen > 0 && now-lastSeen >= millis(a.NewUnseen)
	case schema.StatusFetched:
		return a.FetchedUnseen > 0 && now-lastSeen >= millis(a.FetchedUnseen)
	}
	return false
}

// Cutoffs returns Crossed's thresholds for hashes of that status at now,
// for a scan to compare its columns with: Crossed holds when ok,
// attempts >= minAttempts and lastSeen <= latestSeen, and only then (but
// for a last_seen so far below now that now-lastSeen wraps, which Crossed
// does not count as crossed: confirm with it). ok is false when no hash
// of the status ever crosses them.
func (a ArchiveRule) Cutoffs(status string, now int64) (minAttempts int32, latestSeen int64, ok bool) {
	switch status {
	case schema.StatusFailed:
		return a.MinAttempts, now - millis(a.Unseen), true
	case schema.StatusNew:
		return math.MinInt32, now - millis(a.NewUnseen), a.NewUnseen > 0
	case schema.StatusFetched:
		return math.MinInt32, now - millis(a.FetchedUnseen), a.FetchedUnseen > 0
	}
	return 0, 0, false
}

// MayCross reports whether a hot hash whose last_seen is seenLo or later
// and whose attempts are attemptsHi or fewer may cross the archive
// thresholds at now; false means Crossed is false for every such hash,
// whatever its status: Crossed only grows truer as last_seen gets older
// and attempts more, so asking it at the bounds answers for them all (a
// scan skips a row group by its columns' statistics so). A last_seen
// bound below 0 (now-seenLo could overflow) bounds nothing.
func (a ArchiveRule) MayCross(seenLo int64, attemptsHi int32, now int64) bool {
	return seenLo < 0 || a.Crossed(schema.StatusFailed, attemptsHi, seenLo, now) ||
		a.Crossed(schema.StatusNew, attemptsHi, seenLo, now) ||
		a.Crossed(schema.StatusFetched, attemptsHi, seenLo, now)
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

// LastAnnounce is the announcedAt Reactivate takes from a state row alone
// (merge, which has no batch of sightings): its last_seen when the
// sighting there was an announce_peer (last_source), else 0.
func LastAnnounce(st *schema.State) int64 {
	if st.LastSource == schema.SourceAnnouncePeer {
		return st.LastSeen
	}
	return 0
}
