package cron

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

// Catch-up runs (dedup and merge applying earlier passes' files) write
// their --metrics-file and --stats-json into this pass's folder
// (catchup-STEP-PASS.prom and .json), not METRICS_DIR/infohash_STEP.prom,
// where the pass's own run replaced a failed catch-up's exit_status with
// 0, nor the earlier pass's STEP.json, its record of its own run.
// infohash_crawl_pass.prom says the worst catch-up exit of each step and
// the files they applied.
func TestCrawlPassCatchupMetrics(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	metrics := t.TempDir()
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 3)...)
	ih(t, "dedup", "--data", data, seed)
	// p0 fetched and stopped before dedup and merge; p1's observations
	// are bad input.
	p0, p1 := filepath.Join(data, "work", "p0"), filepath.Join(data, "work", "p1")
	if err := os.MkdirAll(p0, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := obsgen.DefaultConfig()
	cfg.Rows, cfg.Distinct, cfg.Start = 5, 3, time.Now().Add(-time.Hour)
	if _, err := obsgen.WriteParquet(context.Background(), filepath.Join(p0, "observations.parquet"), cfg, obsgen.Native); err != nil {
		t.Fatal(err)
	}
	ih(t, "plan-retries", "--data", data, "-o", filepath.Join(p0, "jobs.parquet"))
	ih(t, "fetch", "--bootstrap", "", "--timeout", "1s", "--deadline", "1s",
		filepath.Join(p0, "jobs.parquet"), "-o", filepath.Join(p0, "results.parquet"))
	own := `{"p0": "its own run"}` + "\n"
	for _, f := range []string{filepath.Join(p0, "dedup.json"), filepath.Join(p0, "merge.json")} {
		if err := os.WriteFile(f, []byte(own), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hexList(t, filepath.Join(p1, "observations.parquet"), "garbage")

	log := runPass(t, data, "z1", "1s", 2, "METRICS_DIR="+metrics)

	pass := filepath.Join(metrics, "infohash_crawl_pass.prom")
	z1 := filepath.Join(data, "work", "z1")
	for _, tt := range []struct{ file, name, want string }{
		{pass, `infohash_crawl_pass_catchup_exit_status{step="dedup"}`, "2"},
		{pass, `infohash_crawl_pass_catchup_exit_status{step="merge"}`, "0"},
		{pass, `infohash_crawl_pass_catchup_inputs{step="dedup"}`, "1"},
		{pass, `infohash_crawl_pass_catchup_inputs{step="merge"}`, "1"},
		{pass, "infohash_crawl_pass_exit_status", "2"},
		{filepath.Join(z1, "catchup-dedup-p1.prom"), "infohash_dedup_exit_status", "2"},
		{filepath.Join(z1, "catchup-dedup-p0.prom"), "infohash_dedup_exit_status", "0"},
		{filepath.Join(z1, "catchup-merge-p0.prom"), "infohash_merge_exit_status", "0"},
		{filepath.Join(metrics, "infohash_dedup.prom"), "infohash_dedup_exit_status", "0"}, // the pass's own
	} {
		if !exists(tt.file) {
			t.Errorf("no %s; log:\n%s", tt.file, log)
			continue
		}
		if got := gauge(t, tt.file, tt.name); got != tt.want {
			t.Errorf("%s: %s = %q, want %s:\n%s", tt.file, tt.name, got, tt.want, readFile(t, tt.file))
		}
	}
	for _, f := range []string{filepath.Join(p0, "dedup.json"), filepath.Join(p0, "merge.json")} {
		if got := readFile(t, f); got != own {
			t.Errorf("%s was replaced by a catch-up run's:\n%s", f, got)
		}
	}
	if n := statsJSON(t, filepath.Join(z1, "catchup-dedup-p0.json"))["observations_read"]; n != 5 {
		t.Errorf("catchup-dedup-p0.json: observations %v, want 5", n)
	}
	if !exists(filepath.Join(z1, "dedup.json")) {
		t.Error("the pass's own dedup.json is missing")
	}

	// Nothing to catch up: 0 and 0.
	log = runPass(t, data, "z2", "1s", 0, "METRICS_DIR="+metrics)
	for _, step := range []string{"dedup", "merge"} {
		for _, g := range []string{"exit_status", "inputs"} {
			name := `infohash_crawl_pass_catchup_` + g + `{step="` + step + `"}`
			if got := gauge(t, pass, name); got != "0" {
				t.Errorf("after a pass with no catch-up: %s = %q, want 0; log:\n%s", name, got, log)
			}
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(data, "work", "z2", "catchup-*")); len(ents) > 0 || strings.Contains(log, "catch-up:") {
		t.Errorf("z2 caught up: %v; log:\n%s", ents, log)
	}
}
