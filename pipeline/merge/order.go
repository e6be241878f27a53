package merge

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/infohash/infohash/formats/schema"
)

// sortResults orders results by hash, then attempts before released rows
// (so that an attempt under a lease counts whatever the order of the
// inputs: a released row then finds the lease used up), then attempt
// time, then input order (sorting indexes: a Result is large).
func sortResults(rs []result) []result {
	idx := make([]int32, len(rs))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &rs[i], &rs[j]
		return cmp.Or(bytes.Compare(a.InfoHash[:], b.InfoHash[:]), cmpReleased(a, b), cmp.Compare(a.AttemptedAt, b.AttemptedAt), cmp.Compare(i, j))
	})
	out := make([]result, len(rs))
	for k, i := range idx {
		out[k] = rs[i]
	}
	return out
}

// cmpReleased orders attempts before released rows.
func cmpReleased(a, b *result) int {
	isRel := func(r *result) int {
		if r.Outcome == schema.OutcomeReleased {
			return 1
		}
		return 0
	}
	return cmp.Compare(isRel(a), isRel(b))
}
