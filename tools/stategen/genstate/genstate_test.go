package genstate

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestRows: the rows carry the prefix, the same source draws the same
// rows, and the mix is about 35% never tried, 20% fetched, 45% failed.
func TestRows(t *testing.T) {
	const n = 4000
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	rows := Rows(rand.New(rand.NewPCG(1, 2)), 0xab, n, now)
	if again := Rows(rand.New(rand.NewPCG(1, 2)), 0xab, n, now); !reflect.DeepEqual(rows, again) {
		t.Fatal("the same source drew other rows")
	}
	count := map[string]int{}
	pol := schedule.Default()
	for i, st := range rows {
		if st.InfoHash[0] != 0xab || st.FirstSeen > now || st.LastSeen < st.FirstSeen {
			t.Fatalf("row %d: %+v", i, st)
		}
		count[st.MetadataStatus]++
		// The tiers merge would have left: cold once the policy archives.
		hot := st
		hot.Tier = schema.TierHot
		if cold := st.Tier == schema.TierCold; cold != schedule.ShouldArchive(pol, &hot, now) {
			t.Fatalf("row %d: %s, %d attempts, unseen %v: cold %v", i, st.MetadataStatus, st.Attempts,
				time.Duration(now-st.LastSeen)*time.Millisecond, cold)
		}
		if st.Tier == schema.TierCold {
			count["cold "+st.MetadataStatus]++
		}
	}
	if count["cold "+schema.StatusNew] == 0 || count["cold "+schema.StatusFailed] == 0 {
		t.Errorf("no cold never-tried or failed rows: %v", count)
	}
	for _, tc := range []struct {
		status string
		share  float64
	}{{schema.StatusNew, 0.35}, {schema.StatusFetched, 0.20}, {schema.StatusFailed, 0.45}} {
		if got := float64(count[tc.status]) / n; got < tc.share-0.03 || got > tc.share+0.03 {
			t.Errorf("%s: %.3f of the rows, want about %.2f", tc.status, got, tc.share)
		}
	}
}
