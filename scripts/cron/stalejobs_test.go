package cron

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A jobs file at DATA_DIR/work/jobs.parquet without its .lease_until (a
// pass killed between its plan and writing it down) says nothing of when
// its leases end: the next pass does not fetch it in place of a plan, but
// plans afresh over it (--replace ends its leases and plans their hashes
// again), and no lease is left stranded.
func TestCrawlPassJobsWithoutLeaseUntil(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hashes(1, 8)...)
	ih(t, "dedup", "--data", data, seed)
	jobs := filepath.Join(data, "work", "jobs.parquet")
	if err := os.MkdirAll(filepath.Dir(jobs), 0o755); err != nil {
		t.Fatal(err)
	}
	ih(t, "plan-retries", "--data", data, "--limit", "5", "-o", jobs)
	if n := len(liveLeases(t, data)); n != 5 {
		t.Fatalf("setup: %d live leases, want 5", n)
	}

	log := runPass(t, data, "s1", "1s", 0, "LIMIT=5")
	s1 := filepath.Join(data, "work", "s1")
	if !exists(filepath.Join(s1, "plan.json")) || strings.Contains(log, "in place of a new plan") ||
		!strings.Contains(log, "has no "+jobs+".lease_until") {
		t.Fatalf("s1 did not plan afresh over the stale jobs file; log:\n%s", log)
	}
	if n := statsJSON(t, filepath.Join(s1, "fetch.json"))["attempted"]; n != 5 {
		t.Errorf("s1 attempted %v jobs, want 5; log:\n%s", n, log)
	}
	if live := liveLeases(t, data); len(live) > 0 {
		t.Errorf("leases stranded: %v; log:\n%s", live, log)
	}
	if exists(jobs) {
		t.Errorf("a jobs file is left at %s", jobs)
	}
}
