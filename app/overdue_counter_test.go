package app

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPlanRetriesCountsOverdueReserve: the jobs the new pool's overdue
// reserve planned (plan.new_overdue_share of the new jobs, for hashes due
// longer than plan.new_overdue_after) are counted as planned_new_overdue,
// within planned_new, in --stats-json, the metrics and the final line.
func TestPlanRetriesCountsOverdueReserve(t *testing.T) {
	for _, tt := range []struct {
		name, now string
		share     string // plan.new_overdue_share
		want      int    // of the 10 jobs, all new
	}{
		{"due a day: not overdue", "2026-03-02T00:00:00Z", "0.1", 0},
		{"due 20 days, share 0.1", "2026-03-21T00:00:00Z", "0.1", 1},
		{"due 20 days, share 0.3", "2026-03-21T00:00:00Z", "0.3", 3},
		{"due 20 days, share 0", "2026-03-21T00:00:00Z", "0", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			seedHashes(t, data, 30, 7) // never tried, due since 2026-03-01
			mustRun(t, nil, "policy", "set", "--data", data, "plan.new_overdue_share="+tt.share)
			run := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(run, 0o755); err != nil {
				t.Fatal(err)
			}
			stats, prom := filepath.Join(run, "plan.json"), filepath.Join(run, "plan.prom")
			_, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", tt.now, "--limit", "10",
				"--stats-json", stats, "--metrics-file", prom, "-o", filepath.Join(run, "jobs.parquet"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := readPlanStats(t, stats)
			if got["planned_new_overdue"] != float64(tt.want) || got["planned_new"] != 10.0 {
				t.Errorf("--stats-json: planned_new_overdue %v, planned_new %v; want %d and 10: %v",
					got["planned_new_overdue"], got["planned_new"], tt.want, got)
			}
			m, err := os.ReadFile(prom)
			if err != nil {
				t.Fatal(err)
			}
			if want := metricsPrefix("plan-retries") + "planned_new_overdue " + strconv.Itoa(tt.want) + "\n"; !strings.Contains(string(m), want) {
				t.Errorf("--metrics-file lacks %q:\n%s", want, m)
			}
			if want := " new=10 new_overdue=" + strconv.Itoa(tt.want) + " "; !strings.Contains(stderr, want) {
				t.Errorf("the final line lacks %q:\n%s", want, stderr)
			}
		})
	}
}
