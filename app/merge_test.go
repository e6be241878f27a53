package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestMergeUnleasedResults: merge --help and README say which results
// without a lease_id (a manual fetch of a hash list) count, and merge
// does what they say: applied when the hash has no lease and the attempt
// is newer than its last one; ignored otherwise.
func TestMergeUnleasedResults(t *testing.T) {
	help := string(mustRun(t, nil, "merge", "--help"))
	for _, want := range []string{"without a lease_id", "has no lease", "newer than the hash's last_attempt"} {
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("merge --help does not say %q", want)
		}
	}

	data := filepath.Join(t.TempDir(), "ih")
	hs := seedHashes(t, data, 1, 5)
	h, _, _, err := schema.ParseHex(hs[0])
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	n := 0
	merge := func(at time.Time, lease string) map[string]any {
		t.Helper()
		n++ // each input differs, or the ledger would skip it
		rs := []schema.Result{{InfoHash: h, HashType: 1, LeaseID: lease, AttemptedAt: at.UnixMilli(),
			Outcome: schema.OutcomeNoPeers, Detail: strings.Repeat("x", n), PeerFailures: []schema.PeerFailure{}}}
		stats := filepath.Join(t.TempDir(), "merge.json")
		mustRun(t, resultsArrow(t, rs), "merge", "--data", data, "--now", at.Add(time.Minute).Format(time.RFC3339), "--stats-json", stats, "-")
		b, err := os.ReadFile(stats)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if st := merge(now, ""); st["failures_applied"] != 1.0 {
		t.Fatalf("an unleased result for a hash without a lease: %v, want it applied", st)
	}
	if st := merge(now, ""); st["stale_failures_ignored"] != 1.0 {
		t.Fatalf("an unleased result not newer than last_attempt: %v, want it ignored", st)
	}
	later := now.Add(time.Hour) // past the 30m retry: due
	if jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--now", later.Format(time.RFC3339), "-o", "-")); len(jobs) != 1 {
		t.Fatalf("planned %d jobs, want the hash", len(jobs))
	}
	if st := merge(later.Add(time.Minute), ""); st["late_failures_ignored"] != 1.0 {
		t.Fatalf("an unleased result for a leased hash: %v, want it ignored", st)
	}
}
