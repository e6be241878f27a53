package app

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestPlanDryRunCountsColdHashes: plan-retries --limit 0 (no -o) reports
// in --stats-json and its summary line the hashes a pass at the same
// --now would find due, the cold ones of the sweep's window among them
// (due_cold said 0: a dry run, having no cold reserve, read no cold
// window), and commits nothing: the cursor stays, and the pass after it
// reads that window and counts the same. Two never-tried hashes of
// partition 0a go cold in place at a merge (unseen 90 days); the sweep's
// first window (00-0f) holds them.
func TestPlanDryRunCountsColdHashes(t *testing.T) {
	const (
		oldA   = "0a01000000000000000000000000000000000000" // seen once, 91 days before the merge: cold
		oldB   = "0a02000000000000000000000000000000000000" // the same
		recent = "0a03000000000000000000000000000000000000" // seen again 80 days later: hot, new
		tried  = "0a04000000000000000000000000000000000000" // planned and failed: hot, a retry
	)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	day := 24 * time.Hour
	data := filepath.Join(t.TempDir(), "ih")
	dedupList(t, data, at(0), oldA, oldB, recent)
	dedupList(t, data, at(80*day), recent)
	dedupList(t, data, at(90*day), tried)
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(91*day), "--limit", "1", "-o", "-"))
	mustRun(t, resultsArrow(t, fakeFetch(jobs, t0.Add(91*day))), "merge", "--data", data, "--far-now", "--now", at(91*day+time.Minute), "-")
	checkTiers(t, data, map[string]string{oldA: "cold", oldB: "cold", recent: "hot", tried: "hot"})
	before, _ := currentManifest(t, data)

	want := map[string]float64{"due": 4, "due_new": 1, "due_retry": 1, "due_cold": 2, "planned": 0,
		"cold_sweep_start": 0, "cold_sweep_next": 0}
	stats := filepath.Join(t.TempDir(), "dry.json")
	stdout, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", at(92*day), "--limit", "0", "--stats-json", stats)
	if code != 0 || stdout != "" {
		t.Fatalf("dry run: exit %d, %d bytes on stdout: %s", code, len(stdout), stderr)
	}
	got := readPlanStats(t, stats)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("dry run's --stats-json: %s %v, want %v", k, got[k], v)
		}
	}
	if !strings.Contains(stderr, " due=4 due_unplanned=4 due_new=1 due_retry=1 due_cold=2 ") {
		t.Errorf("the dry run's summary line does not say 4 due, 1 new, 1 retry, 2 cold:\n%s", stderr)
	}
	if after, _ := currentManifest(t, data); after != before {
		t.Fatalf("the dry run committed snapshot %d (was %d)", after, before)
	}

	real := filepath.Join(t.TempDir(), "real.json")
	mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(92*day), "--limit", "10", "-o", fsutiltest.NullDevice(t), "--stats-json", real)
	got = readPlanStats(t, real)
	want["planned"], want["cold_sweep_next"] = 4, 16
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the pass after it: %s %v, want %v", k, got[k], v)
		}
	}
}
