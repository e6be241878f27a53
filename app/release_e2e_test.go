package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestFetchDeadlineReleasesLeases: "plan-retries -o - | fetch --deadline
// - -o - | merge --data DIR -" over jobs fetch cannot finish: fetch exits
// 3 with a released row per job, merge gives the leases back, and the
// next plan-retries plans every hash again at once.
func TestFetchDeadlineReleasesLeases(t *testing.T) {
	stall := fetchPeer(t, badpeers.Stall)
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	const n = 40
	var list strings.Builder
	for i := range n {
		fmt.Fprintf(&list, "%02x%038x\n", 0x10+i, i)
	}
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, hashes); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	jobsOut, stderr, code := runMainIn(t, nil, "plan-retries", "--data", data, "--limit", "100", "-o", "-")
	if code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	jobs := decodeJobs(t, []byte(jobsOut))
	if len(jobs) != n {
		t.Fatalf("planned %d jobs, want %d", len(jobs), n)
	}
	// Every job stalls on the one peer: two are in flight at the
	// deadline, the rest never started.
	resOut, stderr, code := runMainIn(t, []byte(jobsOut), "fetch", "-", "-o", "-", "--no-dht", "--peer", stall.Addr(),
		"--deadline", "1s", "--concurrency", "2", "--peer-timeout", "1m", "--timeout", "1m")
	if code != 3 {
		t.Fatalf("fetch: exit %d, want 3: %s", code, stderr)
	}
	if want := fmt.Sprintf("%d unfinished (%d leases released)", n, n); !strings.Contains(stderr, want) {
		t.Errorf("fetch's summary lacks %q:\n%s", want, stderr)
	}
	r, err := rowio.Open[schema.Result]("-", bytes.NewReader([]byte(resOut)))
	if err != nil {
		t.Fatal(err)
	}
	results, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	lease := map[schema.Hash]string{}
	for _, j := range jobs {
		lease[j.InfoHash] = j.LeaseID
	}
	for _, res := range results {
		if res.Outcome != schema.OutcomeReleased || res.LeaseID == "" || res.LeaseID != lease[res.InfoHash] {
			t.Fatalf("result %x: %s under lease %q, want released under %q", res.InfoHash, res.Outcome, res.LeaseID, lease[res.InfoHash])
		}
		delete(lease, res.InfoHash)
	}
	if len(results) != n || len(lease) != 0 {
		t.Fatalf("%d results, %d jobs without one", len(results), len(lease))
	}
	if _, stderr, code := runMainIn(t, []byte(resOut), "merge", "--data", data, "-"); code != 0 || !strings.Contains(stderr, fmt.Sprintf("released_rows=%d", n)) {
		t.Fatalf("merge: exit %d, want 0 and released_rows=%d: %s", code, n, stderr)
	}
	again, stderr, code := runMainIn(t, nil, "plan-retries", "--data", data, "--limit", "100", "-o", "-")
	if code != 0 {
		t.Fatalf("plan-retries again: exit %d: %s", code, stderr)
	}
	next := decodeJobs(t, []byte(again))
	if len(next) != n {
		t.Fatalf("after the release: %d jobs planned, want all %d again at once", len(next), n)
	}
	if next[0].LeaseID == jobs[0].LeaseID || next[0].Attempt != jobs[0].Attempt {
		t.Errorf("planned again under lease %q, attempt %d; want a new lease, the same attempt", next[0].LeaseID, next[0].Attempt)
	}
}
