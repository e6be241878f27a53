package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// MaxLease bounds a job's lease (plan.lease, --lease): a week, the time
// merge keeps an ended lease for its late results (leases.Grace). A longer
// one, most likely a typo, would keep a killed fetch's hashes from every
// plan until it ended.
const MaxLease = 7 * 24 * time.Hour

// MinLease is the shortest lease (plan.lease, --lease): lease_until is
// kept in milliseconds, so a shorter one ends at the instant it is
// planned, leasing nothing (a second plan at that instant hands out the
// same hashes again).
const MinLease = time.Millisecond

// FieldError is a policy value that fails validation, named by its JSON
// path ("backoff.no_peers[2]").
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

func fieldErr(path, format string, args ...any) error {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks every field and returns the first problem as a
// *FieldError, in a fixed order.
func (p Policy) Validate() error {
	if p.Version != Version {
		return fieldErr("version", "%d is not supported (this program reads version %d)", p.Version, Version)
	}
	if !(p.Jitter >= 0 && p.Jitter <= 0.9) {
		return fieldErr("jitter", "%v is outside [0, 0.9]", p.Jitter)
	}
	if p.RetrySoon <= 0 {
		return fieldErr("retry_soon", "must be positive, got %s", p.RetrySoon)
	}
	if err := p.validateBackoff(); err != nil {
		return err
	}
	if p.BadMetadata.Sources < 1 {
		return fieldErr("bad_metadata.sources", "must be at least 1, got %d", p.BadMetadata.Sources)
	}
	if err := checkSchedule("bad_metadata.long", p.BadMetadata.Long); err != nil {
		return err
	}
	if err := p.validatePeerPenalty(); err != nil {
		return err
	}
	if err := p.validateReactivation(); err != nil {
		return err
	}
	if p.Archive.MinAttempts < 1 {
		return fieldErr("archive.min_attempts", "must be at least 1, got %d", p.Archive.MinAttempts)
	}
	if p.Archive.Unseen < 0 {
		return fieldErr("archive.unseen", "must not be negative")
	}
	if p.Archive.NewUnseen < 0 {
		return fieldErr("archive.new_unseen", "must not be negative (0 keeps never-tried hashes hot)")
	}
	if p.Archive.FetchedUnseen < 0 {
		return fieldErr("archive.fetched_unseen", "must not be negative (0 keeps fetched hashes hot)")
	}
	return p.validatePlan()
}

func (p Policy) validateBackoff() error {
	if p.Backoff == nil {
		return fieldErr("backoff", "missing")
	}
	for _, c := range sortedKeys(p.Backoff) {
		switch KindOf(c) {
		case KindUnknown:
			return fieldErr(keyPath("backoff", c), "unknown failure class (known: %s)", strings.Join(FailureClasses(), ", "))
		case KindLocal:
			return fieldErr(keyPath("backoff", c), "local errors are retried after retry_soon and take no schedule")
		case KindDeferred:
			return fieldErr(keyPath("backoff", c), "a deferral waits for its peers' penalty and takes no schedule")
		}
	}
	for _, c := range FailureClasses() {
		if KindOf(c) == KindLocal {
			continue
		}
		s, ok := p.Backoff[c]
		if !ok {
			return fieldErr(keyPath("backoff", c), "missing")
		}
		if err := checkSchedule(keyPath("backoff", c), s); err != nil {
			return err
		}
	}
	return nil
}

// checkSchedule requires a non-empty list of positive, non-decreasing
// delays.
func checkSchedule(path string, s []Duration) error {
	if len(s) == 0 {
		return fieldErr(path, "empty schedule: give at least one delay")
	}
	if len(s) > 100 {
		return fieldErr(path, "%d steps is more than 100", len(s))
	}
	for i, d := range s {
		at := fmt.Sprintf("%s[%d]", path, i)
		if d <= 0 {
			return fieldErr(at, "delay must be positive, got %s", d)
		}
		if time.Duration(d) > MaxDuration {
			return fieldErr(at, "delay %s is longer than 100 years", d)
		}
		if i > 0 && d < s[i-1] {
			return fieldErr(at, "%s is shorter than the step before it (%s); delays must not decrease", d, s[i-1])
		}
	}
	return nil
}

func (p Policy) validatePeerPenalty() error {
	r := p.PeerPenalty
	for _, c := range sortedKeys(r.Base) {
		path := keyPath("peer_penalty.base", c)
		switch k := KindOf(c); {
		case k == KindUnknown:
			return fieldErr(path, "unknown failure class")
		case k == KindLocal || k == KindDeferred || c == schema.OutcomeNoPeers:
			return fieldErr(path, "%s is not a failure of one peer", c)
		case c == schema.OutcomePeerLacksTorrent:
			// The peer does not serve one hash: penalising the endpoint
			// would skip it for the hashes it serves.
			return fieldErr(path, "%s is a fact about one hash, not a failure of the endpoint", c)
		}
		if d := r.Base[c]; d < 0 || time.Duration(d) > MaxDuration {
			return fieldErr(path, "penalty must be between 0 (none) and 100 years, got %s", d)
		}
	}
	if !(r.Factor >= 1 && r.Factor <= 100) {
		return fieldErr("peer_penalty.factor", "%v is outside [1, 100]", r.Factor)
	}
	if r.Max <= 0 || time.Duration(r.Max) > MaxDuration {
		return fieldErr("peer_penalty.max", "must be positive and at most 100 years, got %s", r.Max)
	}
	if r.Forget < 0 {
		return fieldErr("peer_penalty.forget", "must not be negative")
	}
	return nil
}

func (p Policy) validateReactivation() error {
	r := p.Reactivation
	// The classes are a set, sorted when decoded: an index would be the
	// sorted position, not the one written, so errors name the value.
	const path = "reactivation.classes"
	for i, c := range r.Classes {
		if k := KindOf(c); k == KindUnknown || k == KindLocal || k == KindDeferred {
			return fieldErr(path, "%q is not a failure class that can be reactivated", c)
		}
		if slices.Index(r.Classes, c) < i {
			return fieldErr(path, "%q is listed twice", c)
		}
	}
	if r.DormantAfter < 0 {
		return fieldErr("reactivation.dormant_after", "must not be negative")
	}
	if r.MinInterval < 0 {
		return fieldErr("reactivation.min_interval", "must not be negative")
	}
	if r.AnnounceMinInterval < 0 {
		return fieldErr("reactivation.announce_min_interval", "must not be negative")
	}
	if r.AnnounceMinInterval > r.MinInterval {
		return fieldErr("reactivation.announce_min_interval",
			"%s is longer than reactivation.min_interval (%s): an announce must not wait longer than any sighting",
			r.AnnounceMinInterval, r.MinInterval)
	}
	if r.Delay < 0 {
		return fieldErr("reactivation.delay", "must not be negative")
	}
	if r.Spread < 0 || time.Duration(r.Spread) > Day {
		return fieldErr("reactivation.spread", "must be between 0 (none) and 1d, got %s", r.Spread)
	}
	return nil
}

func (p Policy) validatePlan() error {
	r := p.Plan
	if !(r.NewShare >= 0 && r.NewShare <= 1) {
		return fieldErr("plan.new_share", "%v is outside [0, 1]", r.NewShare)
	}
	if !(r.ColdShare > 0 && r.ColdShare <= 1) {
		return fieldErr("plan.cold_share", "%v is outside (0, 1]: cold hashes are still retried, give a small share such as 0.01", r.ColdShare)
	}
	if r.ColdPartitions < 1 || r.ColdPartitions > 256 {
		return fieldErr("plan.cold_partitions", "%d is outside [1, 256]", r.ColdPartitions)
	}
	if r.Lease <= 0 {
		return fieldErr("plan.lease", "must be positive")
	}
	if time.Duration(r.Lease) < MinLease {
		return fieldErr("plan.lease", "%s is shorter than %s: lease_until is kept in milliseconds, so the lease would end as it is planned", r.Lease, Duration(MinLease))
	}
	if time.Duration(r.Lease) > MaxLease {
		return fieldErr("plan.lease", "%s is longer than %s", r.Lease, Duration(MaxLease))
	}
	if r.ActivityHalfLife <= 0 {
		return fieldErr("plan.activity_half_life", "must be positive")
	}
	if r.NewOverdueAfter < 0 {
		return fieldErr("plan.new_overdue_after", "must not be negative")
	}
	if !(r.NewOverdueShare >= 0 && r.NewOverdueShare <= 1) {
		return fieldErr("plan.new_overdue_share", "%v is outside [0, 1]", r.NewOverdueShare)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
