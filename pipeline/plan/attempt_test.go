package plan

import (
	"math"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestJobAttemptSaturates: a job's attempt is the hash's attempts plus
// one, at most int32's maximum (a wrapped attempt would be negative).
func TestJobAttemptSaturates(t *testing.T) {
	now := ms(t0)
	for _, tt := range []struct {
		attempts, want int32
	}{
		{1, 2},
		{math.MaxInt32 - 1, math.MaxInt32},
		{math.MaxInt32, math.MaxInt32},
	} {
		st := failedHash(t, hashAt(0x10, 1), now-day, now-day)
		st.Attempts = tt.attempts
		jobs, _ := runPlan(t, makeDataset(t, []schema.State{st}, nil), now, 1, nil)
		if len(jobs) != 1 || jobs[0].Attempt != tt.want {
			t.Errorf("attempts %d: jobs %+v, want one with attempt %d", tt.attempts, jobs, tt.want)
		}
	}
}
