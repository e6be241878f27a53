package dataset

import "github.com/infohash/infohash/formats/schema"

// RepairV2Claim undoes in st, a state row of a format before
// RepairFormat, what fetch did to a hash that an input claimed a full v2
// hash of (info_hash_v2, hash_type 2), until it accepted metadata proved
// by the 20-byte hash too (b43525d): metadata whose SHA-256 did not match
// the claim was a hash_mismatch, though a good peer served the real
// torrent; merge counted each such peer a bad-metadata source and kept
// it in avoid_peers, and two made the hash proven bad (a wait of 7 days,
// then 30, never cut short by a sighting).
//
// A row that may be such a victim (failed, last_failure hash_mismatch,
// hash_type 2, an info_hash_v2) gets bad_metadata 0, no avoid_peers, a
// next_retry no later than now, and tier hot (a repair, like fresh
// evidence, makes a hash hot again: a failure is no tombstone, and a cold
// row would wait for the cold sweep; the migration moves it out of a
// cold file): it is due, and fetch, which no longer
// blames a good peer for a wrong claim, tries it again. Its history
// (attempts, last_failure, last_failure_at, backoff_step) stays. A v2
// hash whose metadata really is bad costs at most Sources more attempts,
// which prove it bad again. It reports whether it changed st (a victim
// with nothing to undo is not counted). The migration repairs the state
// of a dataset it opens; merge --from, which reads the other dataset as
// it is, repairs that one's rows of a format before RepairFormat as it
// reads them.
func RepairV2Claim(st *schema.State, now int64) bool {
	if !v2ClaimVictim(st) {
		return false
	}
	changed := st.BadMetadata != 0 || len(st.AvoidPeers) > 0 || st.NextRetry > now || st.Tier != schema.TierHot
	st.BadMetadata, st.AvoidPeers, st.Tier = 0, nil, schema.TierHot
	st.NextRetry = min(st.NextRetry, now) // null (0) is due already
	return changed
}

// v2ClaimVictim reports whether st may be a victim RepairV2Claim repairs
// (what it looks at, it leaves as it was).
func v2ClaimVictim(st *schema.State) bool {
	return st.MetadataStatus == schema.StatusFailed && st.LastFailure == schema.OutcomeHashMismatch &&
		st.HashType == schema.HashV2 && st.InfoHashV2 != nil
}
