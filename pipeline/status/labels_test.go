package status

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/goldentest"
	"github.com/infohash/infohash/internal/metrics"
)

// TestMetricsLabelled: status's file with --metrics-label's constant
// labels (golden); and every label status writes is one
// metrics.Reserved names, so that --metrics-label refuses it.
func TestMetricsLabelled(t *testing.T) {
	committed := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := &Report{
		Snapshot: 4, CommittedAt: committed, Hashes: 2,
		ByStatusTier: map[string]map[string]int64{"new": {"hot": 1}, "failed": {"cold": 1}},
		ByFailure:    map[string]int64{"timeout": 1},
		Leased:       new(int64(0)),
		WavesBy:      newWavesBy(),
		TableRows:    map[string]int64{"state": 2},
		TableBytes:   map[string]int64{"state": 900},
	}
	b, err := metrics.AddLabels(r.Metrics(time.Second, committed.Add(time.Hour), 0), []metrics.ConstLabel{{Name: "dataset", Value: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	checkExposition(t, string(b))
	golden := filepath.Join("testdata", "metrics-labelled.prom")
	goldentest.Check(t, golden, b, *update)
	names := regexp.MustCompile(`[{,]([a-z_]+)="`)
	for _, f := range []string{"metrics.prom", "metrics-damaged.prom", "metrics-blocklist.prom"} {
		text, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range names.FindAllStringSubmatch(string(text), -1) {
			if !slices.Contains(metrics.Reserved, m[1]) {
				t.Errorf("%s: label %s is not in metrics.Reserved: --metrics-label %s=... would clash", f, m[1], m[1])
			}
		}
	}
}
