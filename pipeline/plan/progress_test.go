package plan

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestPlanReportsProgress: plan-retries reports its scan a partition at a
// time on Options.ProgressTo (here not a terminal: log lines, as dedup's
// and export's, every progress.Interval), and says nothing without it.
// The dry run (--limit 0, no output), whose scan is nearly all its time
// (4.3 s of 4.34 s on 18.4M hot rows), reports it alike.
func TestPlanReportsProgress(t *testing.T) {
	logs := progresstest.Capture(t) // a line at every partition
	for _, tc := range []struct {
		name  string
		to    *bytes.Buffer
		limit int // 0: the dry run, no output
		want  []string
	}{
		{"progress", &bytes.Buffer{}, 10, []string{`msg="plan-retries: scanning partitions"`, "total=3", "percent=100"}},
		{"none", nil, 10, nil},
		{"dry run", &bytes.Buffer{}, 0, []string{`msg="plan-retries: scanning partitions"`, "total=3", "percent=100"}},
		{"dry run, none", nil, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), ms(t0)), newHash(hashAt(2, 1), ms(t0)),
				newHash(hashAt(3, 1), ms(t0))}, nil)
			edit := func(o *Options) {
				if tc.to != nil {
					o.ProgressTo = tc.to
				}
			}
			if tc.limit == 0 {
				o := DefaultOptions()
				o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, t0.Add(time.Hour), 0, "", nil
				edit(&o)
				st, err := Run(context.Background(), o)
				if err != nil || st.Due != 3 || st.Planned != 0 {
					t.Fatalf("dry run: due %d, planned %d (%v); want 3 due, none planned", st.Due, st.Planned, err)
				}
			} else if jobs, _ := runPlan(t, dir, ms(t0.Add(time.Hour)), tc.limit, edit); len(jobs) != 3 {
				t.Fatalf("planned %d jobs, want 3", len(jobs))
			}
			progresstest.Check(t, logs.String(), "plan-retries: scanning", tc.want)
		})
	}
}
