package merge

import (
	"math"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

func TestAddSat(t *testing.T) {
	for _, tt := range []struct{ a, b, want int32 }{
		{1, 2, 3},
		{math.MaxInt32, 1, math.MaxInt32},
		{math.MaxInt32 - 1, math.MaxInt32, math.MaxInt32},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32},
		{math.MinInt32, -1, math.MinInt32},
	} {
		if got := addSat32(tt.a, tt.b); got != tt.want {
			t.Errorf("addSat32(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	for _, tt := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 5, math.MaxInt64 - 5, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, -1, math.MaxInt64 - 1},
	} {
		if got := addSat64(tt.a, tt.b); got != tt.want {
			t.Errorf("addSat64(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestUnionCountsSaturate: the additive union adds attempts and
// seen_count, which stop at their type's maximum instead of wrapping
// negative.
func TestUnionCountsSaturate(t *testing.T) {
	a := failedState(math.MaxInt32-1, math.MaxInt64-1)
	b := failedState(5, 7)
	got, _ := unionState(schedule.Default(), a, b, true)
	if got.Attempts != math.MaxInt32 || got.SeenCount != math.MaxInt64 {
		t.Errorf("attempts %d, seen_count %d; want %d, %d", got.Attempts, got.SeenCount, int32(math.MaxInt32), int64(math.MaxInt64))
	}
}

func failedState(attempts int32, seen int64) schema.State {
	st := newHash(hashAt(0x52, 1), t0)
	st.MetadataStatus, st.Attempts, st.SeenCount, st.LastAttempt = schema.StatusFailed, attempts, seen, t0
	return st
}
