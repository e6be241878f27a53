package status

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMetrics(t *testing.T) {
	committed := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := &Report{
		Snapshot: 42, CommittedAt: committed, Hashes: 9,
		ByStatusTier: map[string]map[string]int64{"new": {"hot": 4}, "failed": {"hot": 2, "cold": 1}, "fetched": {"hot": 2}},
		ByFailure:    map[string]int64{"no_peers": 2, "timeout": 1},
		Leased:       new(int64(3)), LeasesExpired: new(int64(2)),
		RetryWaves: map[string]int64{"overdue": 5, "later": 1},
		WavesBy: func() WavesBy {
			w := newWavesBy()
			w["hot"]["retry"]["overdue"], w["hot"]["new"]["overdue"], w["cold"]["retry"]["overdue"] = 2, 2, 1
			w["cold"]["retry"]["later"] = 1
			return w
		}(),
		OverdueByFailure: func() OverdueByFailure {
			o := newOverdueCounter().counts()
			o["hot"]["no_peers"], o["cold"]["timeout"] = 2, 1
			return o
		}(),
		TableRows:    map[string]int64{"state": 9, "leases": 3},
		TableBytes:   map[string]int64{"state": 4096, "leases": 1500},
		InputsLedger: 7,
		LastInput:    &dataset.Applied{Name: "obs.parquet", At: committed.Add(-90 * time.Second)},
		Partial:      []string{"inbox/partial-1.arrow"},
		Foreign:      []string{"inbox/copied-by-hand.parquet", "inbox/old/"},
		Verified:     &dataset.VerifyResult{Files: 12},
		Totals: map[string]int64{dataset.TotalDedupObservations: 1000, dataset.TotalDedupNew: 9,
			dataset.TotalKey(dataset.TotalPlanJobs, "new"): 6, dataset.TotalPlanNewOverdue: 1,
			dataset.TotalKey(dataset.TotalMergeAttempts, "no_peers"): 2,
			dataset.TotalKey(dataset.TotalMergeAttempts, "ok"):       2, dataset.TotalMergeTorrents: 2,
			dataset.TotalKey(dataset.TotalMergeAttempts, "peers_penalised"): 3, dataset.TotalMergeDeferred: 3},
	}
	for _, tt := range []struct {
		name   string
		report *Report
	}{
		{"metrics.prom", r},
		{"metrics-damaged.prom", func() *Report {
			d := *r
			d.Verified = &dataset.VerifyResult{Files: 12, Problems: []dataset.Problem{{Table: "state", Path: "x", What: "missing"}}}
			return &d
		}()},
		{"metrics-blocklist.prom", func() *Report {
			d := *r
			d.RetryWaves, d.WavesBy, d.OverdueByFailure = nil, nil, nil // not counted
			d.BlocklistError = new("blocklist: DIR/blocklist:3: magnet URI without a urn:btih or urn:btmh xt parameter")
			return &d
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.report.Metrics(1500*time.Millisecond, committed.Add(time.Hour), float64(committed.Add(-time.Hour).Unix()))
			checkExposition(t, string(got))
			golden := filepath.Join("testdata", tt.name)
			goldentest.Check(t, golden, got, *update)
		})
	}
}

// checkExposition checks what Prometheus's text parser insists on: each
// family's HELP and TYPE once, before its samples, and its samples
// together.
func checkExposition(t *testing.T, text string) {
	t.Helper()
	seen := map[string]bool{}
	current := ""
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = strings.Fields(name)[0]
			if seen[name] {
				t.Fatalf("family %s declared twice", name)
			}
			seen[name], current = true, name
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if name != current {
			t.Fatalf("sample %q outside its family (current %s)", line, current)
		}
	}
}

// TestPrintTotals: the text's totals line says how many retries merge
// deferred to a peer penalty's end (merge_failures_deferred: the state
// keeps no mark of a deferral, so that count is all status has), and how
// many of the jobs planned went to overdue new hashes
// (plan_jobs_new_overdue; a manifest from before it has none: 0).
func TestPrintTotals(t *testing.T) {
	for _, tt := range []struct {
		name   string
		totals map[string]int64
		want   string
	}{
		{"deferred", map[string]int64{dataset.TotalKey(dataset.TotalMergeAttempts, "peers_penalised"): 4,
			dataset.TotalKey(dataset.TotalMergeAttempts, "ok"): 1, dataset.TotalMergeTorrents: 1, dataset.TotalMergeDeferred: 3},
			"5 attempts merged (1 torrent stored, 3 retries deferred by peer penalties)\n"},
		{"new overdue", map[string]int64{dataset.TotalKey(dataset.TotalPlanJobs, "new"): 6,
			dataset.TotalKey(dataset.TotalPlanJobs, "retry"): 4, dataset.TotalPlanNewOverdue: 2},
			"10 jobs planned (2 for overdue new hashes), 0 attempts merged"},
		{"older manifest", map[string]int64{dataset.TotalKey(dataset.TotalPlanJobs, "new"): 6},
			"6 jobs planned (0 for overdue new hashes), 0 attempts merged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			(&Report{Totals: tt.totals}).Print(&b)
			if !strings.Contains(b.String(), tt.want) {
				t.Fatalf("status text lacks %q:\n%s", tt.want, b.String())
			}
		})
	}
}
