package dedup

import (
	"math"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// checkObs refuses an observed_at outside 2001-01-01..2200-01-01 (both
// included) with the time as a date and the range, so that a wrong unit
// (seconds read as milliseconds) shows at a glance.
func TestCheckObsTimeRange(t *testing.T) {
	tests := []struct {
		name string
		at   int64
		want string // "" = accepted
	}{
		{"first allowed", minTime, ""},
		{"last allowed", maxTime, ""},
		{"1990", 660009600000, "row 8: observed_at 660009600000 ms (1990-12-01T00:00:00Z) is outside 2001-01-01..2200-01-01"},
		{"a ms before 2001", minTime - 1, "row 8: observed_at 978307199999 ms (2000-12-31T23:59:59.999Z) is outside 2001-01-01..2200-01-01"},
		{"a ms past 2200", maxTime + 1, "row 8: observed_at 7258118400001 ms (2200-01-01T00:00:00.001Z) is outside 2001-01-01..2200-01-01"},
		{"seconds read as ms", 1733000000, "row 8: observed_at 1733000000 ms (1970-01-21T01:23:20Z) is outside 2001-01-01..2200-01-01"},
		{"nanoseconds read as ms", 1733000000000000000, "row 8: observed_at 1733000000000000000 ms (year 54918553) is outside 2001-01-01..2200-01-01"},
		{"most negative", math.MinInt64, "is outside 2001-01-01..2200-01-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkObs(7, schema.HashV1, tt.at)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("accepted")
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("err = %q, want %q", err, tt.want)
			}
		})
	}
}
