// Rules of unionState for first_seen and first_source.

package merge

import "github.com/infohash/infohash/formats/schema"

// unionFirstSource is the first_source of the record whose first_seen the
// union keeps (minKnown): the earlier one's (even null: that record's
// first source is unknown), a known first_seen's over a null one's; at a
// tie, the greater (a known one), as dedup folds a batch into the state,
// so first_source is always the source of the sighting at first_seen.
func unionFirstSource(a, b *schema.State) string {
	switch first := minKnown(a.FirstSeen, b.FirstSeen); {
	case a.FirstSeen == b.FirstSeen:
		return max(a.FirstSource, b.FirstSource)
	case first == a.FirstSeen:
		return a.FirstSource
	default:
		return b.FirstSource
	}
}

// minKnown is the earlier of two times, 0 being null (unknown).
func minKnown(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}
