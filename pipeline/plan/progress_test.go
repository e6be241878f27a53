package plan

import (
	"bytes"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestPlanReportsProgress: plan-retries reports its scan a partition at a
// time on Options.ProgressTo (here not a terminal: log lines, as dedup's
// and export's), and says nothing without it.
func TestPlanReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every partition
	for _, tc := range []struct {
		name string
		to   *bytes.Buffer
		want []string
	}{
		{"progress", &bytes.Buffer{}, []string{`msg="plan-retries: scanning partitions"`, "total=3", "percent=100"}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), ms(t0)), newHash(hashAt(2, 1), ms(t0)),
				newHash(hashAt(3, 1), ms(t0))}, nil)
			jobs, _ := runPlan(t, dir, ms(t0.Add(time.Hour)), 10, func(o *Options) {
				if tc.to != nil {
					o.ProgressTo = tc.to
				}
			})
			if len(jobs) != 3 {
				t.Fatalf("planned %d jobs, want 3", len(jobs))
			}
			progresstest.Check(t, logs.String(), "plan-retries: scanning", tc.want)
		})
	}
}
