package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestDeferredFailedHashGoesCold: a failed hash (one counted attempt,
// below archive.min_attempts) that nobody has announced for 91 days is
// planned again, and fetch skips every peer it knows as penalised
// (peers_penalised). The merge of that results file moves it to the cold
// tier, as status shows, and counts it in archived_deferred (its
// --stats-json, --metrics-file and summary line) as in archived_to_cold;
// the cold sweep plans it once the deferral ends
// (reason cold), and a sighting makes it hot again. A counted failure in
// its place leaves it hot (two attempts, still below min_attempts),
// planned as a retry, and the summary line without archived_deferred. The dataset is made by dedup of a hash list, the
// clock moved with --now.
func TestDeferredFailedHashGoesCold(t *testing.T) {
	const h = "0b01000000000000000000000000000000000000" // partition 0b: in the cold sweep's first window
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	rfc := func(d time.Duration) string { return at(d).Format(time.RFC3339) }
	day := 24 * time.Hour
	for _, tt := range []struct {
		name       string
		outcome    string // the second attempt's, 91 days on
		wantTier   string
		wantReason string // plan-retries' the day after
		// merge's archived_to_cold and archived_deferred
		archived, deferred int
	}{
		{"peers_penalised", schema.OutcomePeersPenalised, schema.TierCold, schema.ReasonCold, 1, 1},
		{"a counted failure", schema.OutcomeNoPeers, schema.TierHot, schema.ReasonRetry, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			dedupList(t, data, rfc(0), h)
			jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(time.Minute),
				"--limit", "1", "-o", "-"))
			if len(jobs) != 1 {
				t.Fatalf("day 0: %d jobs, want 1", len(jobs))
			}
			mergeFile(t, data, at(3*time.Minute), fakeFetch(jobs, at(2*time.Minute))) // no_peers: failed, 1 attempt
			jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(91*day),
				"--limit", "1", "-o", "-"))
			if len(jobs) != 1 || jobs[0].Reason != schema.ReasonRetry {
				t.Fatalf("day 91: jobs %+v, want one retry", jobs)
			}
			rs := fakeFetch(jobs, at(91*day+time.Minute))
			rs[0].Outcome = tt.outcome
			if tt.outcome == schema.OutcomePeersPenalised {
				rs[0].RetryAfter = at(91*day + 6*time.Hour).UnixMilli()
				rs[0].Detail = "all 1 peers found are penalised (avoided); none tried"
			}
			dir := t.TempDir()
			statsJSON, prom := filepath.Join(dir, "merge.json"), filepath.Join(dir, "merge.prom")
			logs := mergeFile(t, data, at(91*day+2*time.Minute), rs, "--stats-json", statsJSON, "--metrics-file", prom)
			checkTiers(t, data, map[string]string{h: tt.wantTier})
			// The deferral's archival counts in archived_deferred too; the
			// summary line names it only when above 0.
			summary := fmt.Sprintf(" archived=%d snapshot=", tt.archived)
			if tt.deferred > 0 {
				summary = fmt.Sprintf(" archived=%d archived_deferred=%d snapshot=", tt.archived, tt.deferred)
			}
			if !strings.Contains(logs, summary) {
				t.Errorf("merge's summary does not say %q:\n%s", summary, logs)
			}
			var counts map[string]any
			js, err := os.ReadFile(statsJSON)
			if err == nil {
				err = json.Unmarshal(js, &counts)
			}
			if err != nil || counts["archived_to_cold"] != float64(tt.archived) || counts["archived_deferred"] != float64(tt.deferred) {
				t.Errorf("--stats-json: %s (%v), want archived_to_cold %d archived_deferred %d", js, err, tt.archived, tt.deferred)
			}
			series := fmt.Sprintf("infohash_merge_archived_deferred %d\n", tt.deferred)
			if m, err := os.ReadFile(prom); err != nil || !strings.Contains(string(m), series) {
				t.Errorf("--metrics-file has no %q: %s (%v)", series, m, err)
			}

			var st struct {
				ByStatusTier map[string]map[string]int64 `json:"by_status_and_tier"`
			}
			if err := json.Unmarshal(mustRun(t, nil, "status", "--data", data, "--far-now", "--now", rfc(91*day+3*time.Minute),
				"--format", "json"), &st); err != nil {
				t.Fatal(err)
			}
			if got := st.ByStatusTier[schema.StatusFailed][tt.wantTier]; got != 1 {
				t.Fatalf("status: %d failed %s hashes, want 1 (%v)", got, tt.wantTier, st.ByStatusTier)
			}

			jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", rfc(92*day),
				"--limit", "10", "-o", "-"))
			if len(jobs) != 1 || schema.Hex(jobs[0].InfoHash) != h || jobs[0].Reason != tt.wantReason {
				t.Fatalf("day 92: jobs %+v, want %s planned as %s", jobs, h, tt.wantReason)
			}
			if tt.wantTier != schema.TierCold {
				return
			}
			// Another hash too: dedup skips an input it has applied (the
			// first list's bytes).
			dedupList(t, data, rfc(93*day), h, "0c01000000000000000000000000000000000000")
			checkTiers(t, data, map[string]string{h: schema.TierHot})
		})
	}
}

// mergeFile writes rs to a results file and merges it into data at now,
// with flags; it returns merge's stderr.
func mergeFile(t *testing.T, data string, now time.Time, rs []schema.Result, flags ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.parquet")
	writeRows(t, path, rs)
	args := append([]string{"merge", "--data", data, "--far-now", "--now", now.Format(time.RFC3339)}, flags...)
	r := ih(t, nil, append(args, path)...)
	if r.code != 0 {
		t.Fatalf("infohash %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stderr
}
