// Rules of unionState for first_seen and first_source.

package merge

import "github.com/infohash/infohash/formats/schema"

// unionFirstSource is the first_source of the record with the earlier
// first_seen (a null one too: that record's first source is unknown);
// at a tie, or when either first_seen is null, the greater (a known one).
func unionFirstSource(a, b *schema.State) string {
	if a.FirstSeen != b.FirstSeen && a.FirstSeen != 0 && b.FirstSeen != 0 {
		if b.FirstSeen < a.FirstSeen {
			return b.FirstSource
		}
		return a.FirstSource
	}
	return max(a.FirstSource, b.FirstSource)
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
