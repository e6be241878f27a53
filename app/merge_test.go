package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
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
		mustRun(t, resultsArrow(t, rs), "merge", "--data", data, "--far-now", "--now", at.Add(time.Minute).Format(time.RFC3339), "--stats-json", stats, "-")
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
	if jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", later.Format(time.RFC3339), "-o", "-")); len(jobs) != 1 {
		t.Fatalf("planned %d jobs, want the hash", len(jobs))
	}
	if st := merge(later.Add(time.Minute), ""); st["late_failures_ignored"] != 1.0 {
		t.Fatalf("an unleased result for a leased hash: %v, want it ignored", st)
	}
}

// TestMergeStdinLockedSaysWhereResultsWait: merge - on a dataset another
// writer holds exits 75 and says that what stdin sent waits in
// DIR/inbox/merge (it does, and the next merge applies it).
func TestMergeStdinLockedSaysWhereResultsWait(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	h := schema.Hash{0x42, 1}
	if _, stderr, code := runMainIn(t, []byte(schema.Hex(h)+"\n"), "dedup", "--data", data, "-"); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	var stream bytes.Buffer
	w := rowio.NewArrowWriter[schema.Result]("results", &stream)
	if err := w.Write([]schema.Result{{InfoHash: h, HashType: schema.HashV1, AttemptedAt: time.Now().UnixMilli(), Outcome: schema.OutcomeNoPeers}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := holdLock(t, data)
	_, stderr, code := runMainIn(t, stream.Bytes(), "merge", "--data", data, "-")
	if code != 75 || !strings.Contains(stderr, "(what stdin sent is kept as "+filepath.Join(data, "inbox", "merge")+"/part-") ||
		!strings.Contains(stderr, ".results; the next merge applies it)") {
		t.Fatalf("exit %d, stderr %q; want 75 saying where the results wait", code, stderr)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, stderr, code := runMain(t, "merge", "--data", data); code != 0 {
		t.Fatalf("the next merge: exit %d: %s", code, stderr)
	}
	if out, _, _ := runMain(t, "export", "--data", data, "--format", "csv", "-o", "-"); !strings.Contains(out, "no_peers") {
		t.Fatalf("the kept result was not applied by the next merge:\n%s", out)
	}
}
