package status

import (
	"encoding/json"
	"testing"
)

// TestWaveCountsJSON: the retry waves' keys come in time order (they came
// by name: within_1d before within_1h), null stays null, a key that names
// no wave comes last, and the object reads back as the map it was.
func TestWaveCountsJSON(t *testing.T) {
	tests := []struct {
		name string
		w    WaveCounts
		want string
	}{
		{"every wave", WaveCounts{"later": 6, "within_30d": 5, "within_7d": 4, "within_1d": 3, "within_1h": 2, "overdue": 1},
			`{"overdue":1,"within_1h":2,"within_1d":3,"within_7d":4,"within_30d":5,"later":6}`},
		{"nil", nil, `null`},
		{"empty", WaveCounts{}, `{}`},
		{"other keys last, by name", WaveCounts{"z": 9, "later": 0, "a\"b": 8, "overdue": -1},
			`{"overdue":-1,"later":0,"a\"b":8,"z":9}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.w)
			if err != nil || string(b) != tt.want {
				t.Fatalf("Marshal = %s (%v), want %s", b, err, tt.want)
			}
			var back map[string]int64
			if err := json.Unmarshal(b, &back); err != nil || len(back) != len(tt.w) {
				t.Fatalf("reads back as %v (%v), want %v", back, err, tt.w)
			}
			for k, v := range tt.w {
				if back[k] != v {
					t.Errorf("%s: %d, want %d", k, back[k], v)
				}
			}
		})
	}
}
