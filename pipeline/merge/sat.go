package merge

import "math"

// addSat32 returns a+b clamped to int32's range: counters saturate rather
// than wrap (as schedule's do when they count one more).
func addSat32(a, b int32) int32 {
	return int32(min(max(int64(a)+int64(b), math.MinInt32), math.MaxInt32))
}

// addSat64 returns a+b clamped to int64's range.
func addSat64(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
