package schedule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Version is the policy.json format this package reads and writes.
const Version = 1

// Policy is the retry policy of a dataset, stored as DIR/policy.json. Every
// stage that schedules (dedup, plan-retries, merge) reads it; fields left
// out of the file keep their Default values.
type Policy struct {
	// Version of the file format (1).
	Version int `json:"version"`
	// Seed feeds the jitter hash: two datasets with different seeds spread
	// the same hashes differently; one seed always gives the same times.
	Seed uint64 `json:"seed"`
	// Jitter is the relative spread of every delay: 0.2 multiplies each
	// delay by a factor in [0.8, 1.2). Between 0 and 0.9.
	Jitter float64 `json:"jitter"`
	// RetrySoon is the delay of a "soon" retry: after a peer-level failure,
	// a first bad-metadata failure, or a local error.
	RetrySoon Duration `json:"retry_soon"`
	// Backoff maps each failure class except local_error to its schedule:
	// the delay after the n-th counted step is Backoff[class][n], and the
	// last entry repeats for ever. Delays must not decrease.
	Backoff map[string][]Duration `json:"backoff"`
	// BadMetadata is the rule for hash_mismatch, invalid_metadata and
	// too_large: how many distinct peers before the hash waits.
	BadMetadata BadMetadataRule `json:"bad_metadata"`
	// PeerPenalty is how long a failing endpoint is skipped.
	PeerPenalty PeerPenaltyRule `json:"peer_penalty"`
	// Reactivation is how a fresh observation wakes a dormant hash.
	Reactivation ReactivationRule `json:"reactivation"`
	// Archive is when a hash moves to the cold tier.
	Archive ArchiveRule `json:"archive"`
	// Plan holds plan-retries' defaults (its flags override them).
	Plan PlanRule `json:"plan"`
}

// BadMetadataRule: a peer that serves metadata failing validation, or
// claims metadata over fetch's size cap (too_large), is penalised and the
// hash retried soon with another peer; only when Sources distinct peers
// have done so (counted in the state's bad_metadata column since the last
// success) does the hash wait: the long delay Long[bad_metadata-Sources]
// (last entry repeats) after bad metadata, the next step of
// backoff.too_large after too_large.
type BadMetadataRule struct {
	Sources int32      `json:"sources"`
	Long    []Duration `json:"long"`
}

// PeerPenaltyRule: an endpoint failing with class c is skipped until
// at + Base[c]·Factor^(failures-1), at most Max. A penalty that expired
// more than Forget ago is forgotten (failures start again at 1). Classes
// missing from Base, or given "0", do not penalise the endpoint;
// peer_lacks_torrent (a fact about one hash) and no_peers may not be
// given one.
type PeerPenaltyRule struct {
	Base   map[string]Duration `json:"base"`
	Factor float64             `json:"factor"`
	Max    Duration            `json:"max"`
	Forget Duration            `json:"forget"`
}

// ReactivationRule: a sighting of a dormant hash, made after its last
// attempt, pulls next_retry to observedAt+Delay plus a per-hash offset in
// [0, Spread) (never later than it was) and makes the hash hot again.
// Dormant means cold, or scheduled to wait at least DormantAfter after its
// last attempt (hashes early in their schedule are retried soon anyway)
// and either failed with a last failure listed in Classes, unless proven
// bad (BadMetadataRule: a sighting is no news about its metadata), or
// never tried but deferred (peers_penalised: every peer found was
// penalised, and a sighting is news that others may be there now); only
// those are pulled forward, and only a hash pulled forward counts as
// reactivated (reactivated_at, the job reason; a cold hash otherwise just
// turns hot, see Reactivate). A hash is reactivated at most once per
// MinInterval: a hash that is looked up all the time but never served
// (common for dead torrents) is then tried once per MinInterval rather
// than on every sighting. An announce_peer sighting is stronger evidence
// than that (a peer says it holds the torrent now, and names its
// endpoint; a get_peers is often just another crawler looking): it
// reactivates once AnnounceMinInterval has passed since the last
// reactivation, at most MinInterval.
// ResetSchedule also returns the hash to the first step of its schedule.
//
// The default keeps the schedule position (ResetSchedule false): the
// reactivated attempt is the fresh look the sighting earned; if it fails
// too, the hash keeps its long delay until a sighting after MinInterval
// (an announce after AnnounceMinInterval).
type ReactivationRule struct {
	Classes      []string `json:"classes"`
	DormantAfter Duration `json:"dormant_after"`
	MinInterval  Duration `json:"min_interval"`
	// AnnounceMinInterval is MinInterval for an announce_peer sighting
	// (see Reactivate): between 0 and MinInterval.
	AnnounceMinInterval Duration `json:"announce_min_interval"`
	Delay               Duration `json:"delay"`
	// Spread is the window reactivated retries are spread over (see
	// ReactivationOffset), so that hashes woken by one sweep do not all
	// come due at once. At most a day; 0 turns it off.
	Spread        Duration `json:"spread"`
	ResetSchedule bool     `json:"reset_schedule"`
}

// ArchiveRule: a failed hash with at least MinAttempts counted attempts
// and no observation for Unseen moves to the cold tier (never deleted).
// MinAttempts counts attempts (schema.State.Attempts), not schedule
// steps: a failure retried soon (peer-level, or bad metadata from a first
// source) counts an attempt without moving the backoff step, so a hash
// may go cold before its schedule reaches its last step. A failed hash
// that merge defers (peers_penalised, which counts no attempt) while
// unseen for Unseen goes cold then, with fewer attempts
// (ShouldArchiveDeferred); Unseen 0 turns that off.
//
// NewUnseen, when above 0, moves a never-tried (new) hash with no
// observation for that long to the cold tier: discovery outruns fetch, so
// the backlog of hashes seen once and ranked last is never tried, and
// would stay in the hot files plan-retries scans and merge rewrites every
// pass for ever. The cold sweep still plans it (reason cold, in the cold
// share). A local_error or a peers_penalised deferral leaves a hash new,
// so it goes too. 0 keeps new hashes hot; the default is Unseen's 90 days,
// and a policy.json without the key reads as that default, as every
// missing key does.
//
// FetchedUnseen, when above 0, moves a fetched hash with no observation
// for that long to the cold tier too: it is never planned again, and out
// of the hot files plan-retries scans and merge rewrites every pass. 0
// (the default) keeps fetched hashes hot.
//
// A sighting makes a cold hash hot again, whatever its status.
type ArchiveRule struct {
	MinAttempts   int32    `json:"min_attempts"`
	Unseen        Duration `json:"unseen"`
	NewUnseen     Duration `json:"new_unseen"`
	FetchedUnseen Duration `json:"fetched_unseen"`
}

// PlanRule holds plan-retries' defaults.
type PlanRule struct {
	// NewShare is the least share of --limit kept for never-tried hashes:
	// ceil(limit × share), at least one job when the share is above 0,
	// taken before the cold reserve and the retries, but at most
	// limit-1 when cold hashes are due and limit is 2 or more (each tier
	// with due hashes gets a job); what new hashes do not use goes to the
	// others.
	NewShare float64 `json:"new_share"`
	// ColdShare is the share of --limit reserved for due cold hashes met
	// in the cold sweep: floor(limit × share), but at least one job, out
	// of what the new share leaves (and at most limit-1 when hot hashes
	// are due and limit is 2 or more); slots
	// that new and retried hashes leave unused go to cold ones too. In
	// (0, 1]: cold hashes are retried, only rarely, so 0 is refused.
	ColdShare float64 `json:"cold_share"`
	// ColdPartitions is how many prefix partitions' cold files one plan
	// pass reads. The window starts at a cursor kept in the dataset's
	// manifest and each plan commit moves it on by this width, so the
	// whole cold tier is read once every 256/ColdPartitions passes,
	// however often passes run (see InColdWindow).
	ColdPartitions int `json:"cold_partitions"`
	// Lease is how long a planned job is reserved for its fetch.
	Lease Duration `json:"lease"`
	// ActivityHalfLife decays the state's activity to the planning time
	// when ranking hashes (see PriorityOf); it should be the half-life
	// dedup computes activity with.
	ActivityHalfLife Duration `json:"activity_half_life"`
	// NewOverdueAfter and NewOverdueShare bound how long a never-tried
	// hot hash waits behind busier ones: one due for longer than
	// NewOverdueAfter is overdue (Overdue), and NewOverdueShare of the
	// new pool's jobs (rounded down, at least one when any is overdue;
	// 0: none) go to overdue hashes, the longest waiting first; the rest
	// of the pool goes by priority as before (overdue ones too). Discovery
	// outruns fetch, so without it a quiet hash kept hot by sightings
	// waited for ever. A share, not a rank: ranked ahead of every busier
	// hash, as starved retries are, the overdue hashes (more each pass
	// under a lasting backlog) would take the whole pool oldest first.
	NewOverdueAfter Duration `json:"new_overdue_after"`
	NewOverdueShare float64  `json:"new_overdue_share"`
}

// DefaultSchedule is the seed's schedule: +30m, +2h, +8h, +1d, +7d, then
// +30d for ever.
func DefaultSchedule() []Duration {
	return []Duration{
		Duration(30 * time.Minute), Duration(2 * time.Hour), Duration(8 * time.Hour),
		Duration(Day), Duration(7 * Day), Duration(30 * Day),
	}
}

// Default returns the documented default policy.
func Default() Policy {
	backoff := map[string][]Duration{schema.OutcomeTooLarge: {Duration(30 * Day)}}
	for _, c := range FailureClasses() {
		if k := KindOf(c); k != KindTooLarge && k != KindLocal {
			backoff[c] = DefaultSchedule()
		}
	}
	return Policy{
		Version:     Version,
		Jitter:      0.2,
		RetrySoon:   Duration(10 * time.Minute),
		Backoff:     backoff,
		BadMetadata: BadMetadataRule{Sources: 2, Long: []Duration{Duration(7 * Day), Duration(30 * Day)}},
		PeerPenalty: PeerPenaltyRule{
			Base: map[string]Duration{
				schema.OutcomeConnectFailed:   Duration(10 * time.Minute),
				schema.OutcomeTimeout:         Duration(10 * time.Minute),
				schema.OutcomeHandshakeFailed: Duration(time.Hour),
				schema.OutcomeRejected:        Duration(time.Hour),
				schema.OutcomeNoUTMetadata:    Duration(Day),
				schema.OutcomeNoExtension:     Duration(7 * Day),
				schema.OutcomeHashMismatch:    Duration(7 * Day),
				schema.OutcomeInvalidMetadata: Duration(7 * Day),
				schema.OutcomeTooLarge:        Duration(7 * Day),
			},
			Factor: 2,
			Max:    Duration(30 * Day),
			Forget: Duration(30 * Day),
		},
		Reactivation: ReactivationRule{
			Classes: []string{
				schema.OutcomeNoPeers, schema.OutcomeConnectFailed, schema.OutcomeTimeout,
				schema.OutcomeHandshakeFailed, schema.OutcomeNoExtension,
				schema.OutcomeNoUTMetadata, schema.OutcomeRejected, schema.OutcomePeerLacksTorrent,
			},
			DormantAfter:        Duration(12 * time.Hour),
			MinInterval:         Duration(7 * Day),
			AnnounceMinInterval: Duration(12 * time.Hour),
			Spread:              Duration(30 * time.Minute),
		},
		Archive: ArchiveRule{MinAttempts: 6, Unseen: Duration(90 * Day), NewUnseen: Duration(90 * Day)},
		Plan: PlanRule{
			NewShare:         0.5,
			ColdShare:        0.02,
			ColdPartitions:   16,
			Lease:            Duration(2 * time.Hour),
			ActivityHalfLife: Duration(Day),
			NewOverdueAfter:  Duration(7 * Day),
			NewOverdueShare:  0.1,
		},
	}
}

// Hash is the policy's fingerprint, in the stats of the stages that
// schedule (manifests carry the whole policy): the hex SHA-256
// of its canonical JSON. Equal policies have equal hashes however their
// files were written ("1d" and "24h" are the same delay).
func (p Policy) Hash() string {
	b, err := json.Marshal(p.canonical())
	if err != nil { // cannot happen: every field marshals
		panic("schedule: marshal policy: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
