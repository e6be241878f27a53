package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanRetriesKeepsALeasedJobsFile: plan-retries to the -o FILE of an
// earlier run whose jobs are still leased exits 2 with one line that says
// how to go on (FILE exists: --replace), before it opens the dataset, and
// leaves FILE as it was; --replace writes over it, ending those leases,
// so that no hash stays leased to a file no one has.
func TestPlanRetriesKeepsALeasedJobsFile(t *testing.T) {
	dir := t.TempDir()
	data, jobs := filepath.Join(dir, "ds"), filepath.Join(dir, "J.parquet")
	if _, stderr, code := runMainIn(t, []byte(committedHash+"\n"), "dedup", "--data", data, "--now", "2026-03-01T00:00:00Z", "-"); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	plan := func(extra ...string) (string, int) {
		_, stderr, code := runMain(t, append([]string{"plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", jobs}, extra...)...)
		return stderr, code
	}
	if stderr, code := plan(); code != 0 {
		t.Fatalf("first plan-retries: exit %d: %s", code, stderr)
	}
	first, err := os.ReadFile(jobs)
	if err != nil {
		t.Fatal(err)
	}
	stderr, code := plan()
	want := "infohash: plan-retries: -o " + jobs + " exists: give --replace to write over it\n"
	if code != 2 || stderr != want {
		t.Fatalf("second plan-retries: exit %d, want 2 and the one line %q:\n%s", code, want, stderr)
	}
	if now, err := os.ReadFile(jobs); err != nil || string(now) != string(first) {
		t.Fatalf("the refused run changed %s (%v)", jobs, err)
	}
	stderr, code = plan("--replace")
	if code != 0 || !strings.Contains(stderr, "leases_ended=1") || !strings.Contains(stderr, "planned=1") {
		t.Fatalf("plan-retries --replace: exit %d, want 0, 1 lease ended and the hash planned again:\n%s", code, stderr)
	}
}
