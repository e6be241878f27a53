// Package genstate makes the synthetic state rows of tools/stategen, so
// that tests which want a state shaped like a benchmark's (dedup's
// rewarm tests) draw it the same way.
package genstate

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// Rows returns n states of hashes that begin with the byte prefix, drawn
// from r, in the order drawn (unsorted), as of now (Unix ms): first seen
// up to 180 days before now; 35% never tried (due since first seen: dedup
// sets a new hash's next_retry to its run's clock), 20% fetched, the rest failed
// from 1 to 8 times under the default policy with their next retry moved
// to within a week of now (due or not); cold if the policy archives them
// by now (failed ones, and never-tried ones unseen for
// archive.new_unseen), as merge would have left them.
func Rows(r *rand.Rand, prefix byte, n int, now int64) []schema.State {
	pol := schedule.Default()
	rows := make([]schema.State, n)
	for i := range rows {
		var h schema.Hash
		h[0] = prefix
		binary.BigEndian.PutUint64(h[1:], r.Uint64())
		binary.BigEndian.PutUint64(h[9:], r.Uint64())
		binary.BigEndian.PutUint32(h[16:], r.Uint32())
		first := now - r.Int64N(180*24*3600*1000)
		last := first + r.Int64N(now-first+1)
		st := schema.State{InfoHash: h, HashType: schema.HashV1, FirstSeen: first, LastSeen: last,
			SeenCount: 1 + r.Int64N(50), LastSource: schema.SourceGetPeers, Activity: r.Float64() * 8,
			MetadataStatus: schema.StatusNew, Tier: schema.TierHot}
		switch x := r.IntN(100); {
		case x < 35: // never tried: due since the dedup run that found it
			st.NextRetry = first
		case x < 55: // fetched
			schedule.ApplySuccess(&st, last)
		default: // failed k times, the last one recently enough to be due or not
			k := 1 + r.IntN(8)
			at := last
			for range k {
				schedule.ApplyFailure(pol, &st, schema.OutcomeNoPeers, at, false)
				at = st.NextRetry
			}
			shift := st.NextRetry - now + r.Int64N(14*24*3600*1000) - 7*24*3600*1000
			st.LastAttempt -= shift
			st.NextRetry -= shift
		}
		if schedule.ShouldArchive(pol, &st, now) {
			st.Tier = schema.TierCold
		}
		rows[i] = st
	}
	return rows
}
