// The state columns by position, sets of them, and which of them two rows
// differ in: what Splice and the writer agree on.

package statecol

import (
	"bytes"
	"math"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// Columns is a set of state columns, bit k for the k-th column of the
// file (info_hash is bit 0).
type Columns uint32

// AllColumns is every state column.
const AllColumns = Columns(1)<<numStateColumns - 1

// ColumnsNamed returns the set of the named state columns; it panics on
// a name that is not one (a programming error).
func ColumnsNamed(names ...string) Columns {
	var c Columns
	for _, n := range names {
		k := slices.Index(stateColumnNames[:], n)
		if k < 0 {
			panic("statecol: no state column " + n)
		}
		c |= 1 << k
	}
	return c
}

// Names returns the names of the (top-level) columns in c, in file order
// (nil for none): what a rowio.DataFile of a state file lacks.
func (c Columns) Names() []string {
	var out []string
	for k, n := range stateColumnNames {
		if c&(1<<k) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// The state columns in file order (checked against the template).
const (
	cInfoHash = iota
	cInfoHashV2
	cHashType
	cFirstSeen
	cLastSeen
	cSeenCount
	cLastSource
	cActivity
	cMetadataStatus
	cAttempts
	cLastAttempt
	cLastFailure
	cNextRetry
	cLeaseID
	cLeaseUntil
	cTier
	cBackoffStep
	cBadMetadata
	cReactivated
	cAvoidPeers
	cPeers
	cFirstSource
	cLastFailureAt
	cPeersAt
	cInfoHashV2Source
	numStateColumns
)

var stateColumnNames = [numStateColumns]string{"info_hash", "info_hash_v2", "hash_type", "first_seen",
	"last_seen", "seen_count", "last_source", "activity", "metadata_status", "attempts", "last_attempt",
	"last_failure", "next_retry", "lease_id", "lease_until", "tier", "backoff_step", "bad_metadata",
	"reactivated_at", "avoid_peers", "peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}

// Changed reports the columns in which a and b differ.
func Changed(a, b *schema.State) Columns {
	var c Columns
	set := func(k int, differ bool) {
		if differ {
			c |= 1 << k
		}
	}
	set(cInfoHash, a.InfoHash != b.InfoHash)
	set(cInfoHashV2, !bytes.Equal(a.InfoHashV2, b.InfoHashV2))
	set(cHashType, a.HashType != b.HashType)
	set(cFirstSeen, a.FirstSeen != b.FirstSeen)
	set(cLastSeen, a.LastSeen != b.LastSeen)
	set(cSeenCount, a.SeenCount != b.SeenCount)
	set(cLastSource, a.LastSource != b.LastSource)
	set(cActivity, math.Float64bits(a.Activity) != math.Float64bits(b.Activity))
	set(cMetadataStatus, a.MetadataStatus != b.MetadataStatus)
	set(cAttempts, a.Attempts != b.Attempts)
	set(cLastAttempt, a.LastAttempt != b.LastAttempt)
	set(cLastFailure, a.LastFailure != b.LastFailure)
	set(cNextRetry, a.NextRetry != b.NextRetry)
	set(cLeaseID, a.LeaseID != b.LeaseID)
	set(cLeaseUntil, a.LeaseUntil != b.LeaseUntil)
	set(cTier, a.Tier != b.Tier)
	set(cBackoffStep, a.BackoffStep != b.BackoffStep)
	set(cBadMetadata, a.BadMetadata != b.BadMetadata)
	set(cReactivated, a.Reactivated != b.Reactivated)
	set(cAvoidPeers, !slices.Equal(a.AvoidPeers, b.AvoidPeers))
	set(cPeers, !slices.Equal(a.Peers, b.Peers))
	set(cFirstSource, a.FirstSource != b.FirstSource)
	set(cLastFailureAt, a.LastFailureAt != b.LastFailureAt)
	set(cPeersAt, a.PeersAt != b.PeersAt)
	set(cInfoHashV2Source, a.InfoHashV2Source != b.InfoHashV2Source)
	return c
}
