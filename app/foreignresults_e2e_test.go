package app

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMergeRefusesAnotherDatasetsResults: two datasets of the same hashes
// planned at the same --now (and snapshot, seed) gave their jobs the same
// lease_id, so the results of one applied to the other's leases. Each
// lease_id now names its dataset: merging A's results into B exits 2 with
// one line naming the file and changes nothing (B's state, and B's own
// results then apply), and A takes them. The real binary.
func TestMergeRefusesAnotherDatasetsResults(t *testing.T) {
	hashes := []string{"0e01000000000000000000000000000000000000", "0e02000000000000000000000000000000000000"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	dedupList(t, a, rfc(0), hashes...)
	dedupList(t, b, rfc(0), hashes...)
	plan := func(data string) string {
		jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(time.Minute),
			"--limit", "10", "-o", "-"))
		if len(jobs) != 2 {
			t.Fatalf("%s: %d jobs, want 2", data, len(jobs))
		}
		path := filepath.Join(t.TempDir(), "results.parquet")
		writeRows(t, path, fakeFetch(jobs, t0.Add(2*time.Minute)))
		return path
	}
	resA, resB := plan(a), plan(b)
	before := stateCSV(t, b)
	args := []string{"merge", "--data", b, "--far-now", "--now", rfc(3 * time.Minute)}
	r := ih(t, nil, append(args, resA)...)
	msg := strings.TrimSpace(r.stderr)
	if r.code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, resA) ||
		!strings.Contains(msg, "results of another dataset's jobs") {
		t.Fatalf("merge of A's results into B: exit %d\n%s\nwant exit 2, one line naming %s", r.code, r.stderr, resA)
	}
	if after := stateCSV(t, b); after != before {
		t.Fatalf("B's state changed by a refused merge:\n%s\nwas\n%s", after, before)
	}
	for _, m := range []struct{ data, res string }{{b, resB}, {a, resA}} {
		if r := ih(t, nil, "merge", "--data", m.data, "--far-now", "--now", rfc(3*time.Minute), m.res); r.code != 0 ||
			!strings.Contains(r.stderr, "failures_applied=2") {
			t.Fatalf("merge of %s's own results: exit %d\n%s\nwant 2 failures applied", m.data, r.code, r.stderr)
		}
	}
}
