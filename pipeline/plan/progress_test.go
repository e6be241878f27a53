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

// TestPlanReportsPhases: the steps after the scan, which count nothing
// (picking the jobs: 5.8 s for 3M of 18.4M hot rows; writing them;
// committing their leases: 1.6 s for 3M jobs), say what they do once they
// have run for progress.Interval (here 0: as they start and as they end),
// on a file and on stdout, as merge's steps do. They said nothing: 9 s
// without a line after "scanning partitions", then 1.6 s after "writing
// jobs".
func TestPlanReportsPhases(t *testing.T) {
	logs := progresstest.Capture(t)
	steps := []string{`msg="plan-retries: picking jobs"`, `msg="plan-retries: writing jobs"`,
		`msg="plan-retries: committing"`, "finished=true"}
	for _, tc := range []struct {
		name   string
		to     *bytes.Buffer
		stdout bool
		want   []string
	}{
		{"file", &bytes.Buffer{}, false, steps},
		{"stdout", &bytes.Buffer{}, true, steps},
		{"none", nil, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			dir := makeDataset(t, []schema.State{newHash(hashAt(1, 1), ms(t0)), newHash(hashAt(2, 1), ms(t0))}, nil)
			edit := func(o *Options) {
				if tc.to != nil {
					o.ProgressTo = tc.to
				}
			}
			if tc.stdout {
				var out bytes.Buffer
				o := DefaultOptions()
				o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, t0.Add(time.Hour), 10, "-", &out
				edit(&o)
				if st, err := Run(context.Background(), o); err != nil || st.Planned != 2 || out.Len() == 0 {
					t.Fatalf("planned %d jobs, %d bytes on stdout (%v); want 2", st.Planned, out.Len(), err)
				}
			} else if jobs, _ := runPlan(t, dir, ms(t0.Add(time.Hour)), 10, edit); len(jobs) != 2 {
				t.Fatalf("planned %d jobs, want 2", len(jobs))
			}
			progresstest.Check(t, logs.String(), "plan-retries: picking", tc.want)
			progresstest.Check(t, logs.String(), "plan-retries: writing", tc.want)
			progresstest.Check(t, logs.String(), "plan-retries: committing", tc.want)
		})
	}
}
