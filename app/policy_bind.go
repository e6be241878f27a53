package app

import (
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/dedup"
)

// bindPolicy gives dedup the scheduler's reactivation rule.
// TODO(schedule): replace with schedule.Load + schedule.Reactivate.
func bindPolicy(dir string, o *dedup.Options) error {
	o.Reactivate = func(st *schema.State, at int64) bool {
		if st.MetadataStatus != schema.StatusFailed && st.Tier != schema.TierCold {
			return false
		}
		next := at + 30*60*1000
		if st.NextRetry == 0 || st.NextRetry > next {
			st.NextRetry = next
		}
		st.Tier = schema.TierHot
		st.Reactivated = at
		return true
	}
	return nil
}
