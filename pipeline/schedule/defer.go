package schedule

import (
	"fmt"
	"math"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// ApplyDeferral records an attempt made at attemptedAt that dialled
// nobody: every peer it found was skipped as penalised, and the earliest
// of the penalties still running then ends at retryAfter (the outcome
// peers_penalised and its retry_after). That is no failure of the hash,
// which may have paid for a peer penalised with another: attempts,
// last_failure, backoff_step, bad_metadata and metadata_status stay as
// they were, and no endpoint is penalised. last_attempt is set, as a
// local_error sets it: the attempt was made (and a replay of the same
// unleased result is then stale). The lease is cleared.
//
// next_retry is attemptedAt + max(retryAfter − attemptedAt, RetrySoon),
// that delay spread upward only by a factor in [1, 1+Jitter) drawn from a
// hash of (info_hash, attemptedAt, policy seed): never before the
// penalty's end, and hashes deferred by one peer do not all wake at once.
// The delay, before the jitter, is at most MaxDuration.
func ApplyDeferral(p Policy, st *schema.State, attemptedAt, retryAfter int64) error {
	h := schema.Hex(st.InfoHash)
	if st.MetadataStatus == schema.StatusFetched {
		return fmt.Errorf("schedule: %s: %s: %w", h, schema.OutcomePeersPenalised, ErrFetched)
	}
	if retryAfter <= 0 {
		return fmt.Errorf("schedule: %s: %s without retry_after", h, schema.OutcomePeersPenalised)
	}
	// A penalty ending more than MaxDuration on is waited for that long:
	// merge refuses such a retry_after, but reads a result dated after its
	// clock as dated at it, which can leave one further off; past int64,
	// the conversion below would wrap next_retry to ~292 million years BC.
	delay := min(max(float64(retryAfter-attemptedAt), float64(time.Duration(p.RetrySoon)/time.Millisecond)),
		float64(MaxDuration/time.Millisecond))
	u := unitHash(st.InfoHash, uint64(attemptedAt), p.Seed^deferDomain)
	st.LastAttempt = attemptedAt
	st.NextRetry = attemptedAt + int64(math.Floor(delay*(1+p.Jitter*u)))
	st.LeaseID, st.LeaseUntil = "", 0
	return nil
}
