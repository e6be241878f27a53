package schedule

import "testing"

// TestActivityStep: the activity step is log2 of the activity decayed by
// the sighting's age in half-lives, floored; a last_seen after the
// planning time (a capture host's clock ahead) counts as age 0, never as
// extra activity, and no activity or no half-life is the lowest step.
func TestActivityStep(t *testing.T) {
	const h = int64(3600_000)
	tests := []struct {
		name     string
		activity float64
		age      int64
		want     int32
	}{
		{"fresh", 8, 0, 3},
		{"one half-life old", 8, h, 2},
		{"half a half-life old", 8, h / 2, 2},
		{"seen after now", 8, -2 * h, 3},
		{"never active", 0, 0, minActivity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := activityStep(tt.activity, tt.age, h); got != tt.want {
				t.Errorf("activityStep(%v, %d, %d) = %d, want %d", tt.activity, tt.age, h, got, tt.want)
			}
		})
	}
	if got := activityStep(8, 0, 0); got != minActivity {
		t.Errorf("activityStep without a half-life = %d, want %d", got, minActivity)
	}
}
