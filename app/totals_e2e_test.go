package app

import (
	"crypto/sha1"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestTotalsCountCommittedWorkOnce: status reports the dataset's
// cumulative totals (JSON and Prometheus counters); applying the same
// hash list or results file again adds nothing, and each stage's commits
// add what they applied.
func TestTotalsCountCommittedWorkOnce(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	totals := func() map[string]int64 {
		t.Helper()
		var r struct {
			Totals map[string]int64 `json:"totals"`
		}
		if err := json.Unmarshal(mustRun(t, nil, "status", "--data", data, "--format", "json"), &r); err != nil {
			t.Fatal(err)
		}
		return r.Totals
	}
	check := func(when string, want map[string]int64) {
		t.Helper()
		got := totals()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: total %s = %d, want %d (all: %v)", when, k, got[k], v, got)
			}
		}
	}
	seedHashes(t, data, 300, 7)
	list := filepath.Join(dir, "again.txt")
	// The same 300 hashes in a new file (another input) and in the file
	// already applied: the first is 300 sightings of known hashes.
	out := mustRun(t, nil, "export", "--data", data, "--table", "state", "--format", "csv", "-o", "-")
	var hs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		hs = append(hs, strings.SplitN(line, ",", 2)[0])
	}
	if err := os.WriteFile(list, []byte(strings.Join(hs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := "2026-03-01T00:10:00Z"
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", now, list)
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", now, list) // already applied
	check("after dedup", map[string]int64{"dedup_inputs": 2, "dedup_observations": 600, "dedup_new_hashes": 300})

	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at.Format(time.RFC3339), "--limit", "100", "-o", "-"))
	if len(jobs) != 100 {
		t.Fatalf("planned %d jobs, want 100", len(jobs))
	}
	check("after plan-retries", map[string]int64{"plan_jobs:new": 100, "plan_jobs:retry": 0})

	info := []byte("d6:lengthi1e4:name1:b12:piece lengthi16384e6:pieces20:bbbbbbbbbbbbbbbbbbbbe")
	okHash := sha1.Sum(info)
	rs := append(fakeFetch(jobs, at.Add(time.Minute)), schema.Result{InfoHash: okHash, HashType: 1, AttemptedAt: at.Add(time.Minute).UnixMilli(),
		Outcome: schema.OutcomeOK, ResultMeta: schema.OKMeta(schema.Meta{Name: new("b"), NameRaw: []byte("b"), NameUTF8Valid: true, InfoBytes: info})})
	results := filepath.Join(dir, "results.arrows")
	if err := os.WriteFile(results, resultsArrow(t, rs), 0o644); err != nil {
		t.Fatal(err)
	}
	mergeNow := at.Add(2 * time.Minute).Format(time.RFC3339)
	mustRun(t, nil, "merge", "--data", data, "--far-now", "--now", mergeNow, results)
	mustRun(t, nil, "merge", "--data", data, "--far-now", "--now", mergeNow, results) // already applied
	want := map[string]int64{"merge_inputs": 1, "merge_results": 101, "merge_attempts:no_peers": 100, "merge_attempts:ok": 1,
		"merge_torrents": 1, "merge_unknown_hashes": 1, "dedup_observations": 600, "plan_jobs:new": 100}
	check("after merge", want)

	prom := filepath.Join(dir, "status.prom")
	mustRun(t, nil, "status", "--data", data, "--metrics-file", prom)
	b, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"# TYPE infohash_dataset_dedup_observations_total counter",
		"infohash_dataset_dedup_observations_total 600",
		`infohash_dataset_plan_jobs_total{kind="new"} 100`,
		`infohash_dataset_merge_attempts_total{outcome="no_peers"} 100`,
		`infohash_dataset_merge_attempts_total{outcome="timeout"} 0`,
		"infohash_dataset_merge_torrents_total 1",
	} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("status --metrics-file lacks %q", line)
		}
	}
	text := string(mustRun(t, nil, "status", "--data", data))
	if !strings.Contains(text, "600 observations, 300 new hashes, 100 jobs planned (0 for overdue new hashes), 101 attempts merged (1 torrent stored, 0 retries deferred by peer penalties)") {
		t.Errorf("status text lacks the totals line:\n%s", text)
	}
}

// TestStatusHelpNamesTotals: status --help names every total this build
// keeps (a new one must be documented where users look for it).
func TestStatusHelpNamesTotals(t *testing.T) {
	help, _, code := runMain(t, "status", "--help")
	if code != 0 {
		t.Fatalf("status --help: exit %d", code)
	}
	for _, f := range dataset.TotalFamilies {
		if !strings.Contains(help, f.Name) {
			t.Errorf("status --help does not name the total %s", f.Name)
		}
	}
}
