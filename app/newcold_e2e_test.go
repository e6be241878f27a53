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

// TestNeverTriedHashGoesColdAndIsStillPlanned: with the default policy
// (archive.new_unseen 90d), merge moves never-tried hashes unseen for 90
// days to the cold tier when it rewrites their partition, and keeps one
// seen since hot; status counts them as cold new hashes; the cold sweep
// plans them with reason cold out of the cold share (not the new share:
// due_new counts only the hot one); a sighting makes one hot, planned as
// new again. With archive.new_unseen=0 nothing goes cold. The dataset is
// made by dedup of hash lists, the clock moved with --now.
func TestNeverTriedHashGoesColdAndIsStillPlanned(t *testing.T) {
	const (
		oldA   = "0a01000000000000000000000000000000000000" // seen once, 91 days before the merge
		oldB   = "0a02000000000000000000000000000000000000" // the same
		recent = "0a03000000000000000000000000000000000000" // seen again 80 days later
		tried  = "0a04000000000000000000000000000000000000" // seen at 90 days, planned and failed
	)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	day := 24 * time.Hour
	for _, tt := range []struct {
		name     string
		set      []string // policy set assignments, none for the default
		wantCold bool
	}{
		{"default", nil, true},
		{"new_unseen 0", []string{"archive.new_unseen=0"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ih")
			dedupList(t, data, at(0), oldA, oldB, recent)
			// No overdue reserve: it would give the one job below to
			// recent, never tried and due for 91 days (TestOverdueNewIsPlanned).
			mustRun(t, nil, append([]string{"policy", "set", "--data", data, "plan.new_overdue_share=0"}, tt.set...)...)
			dedupList(t, data, at(80*day), recent)
			dedupList(t, data, at(90*day), tried)
			// The busiest new hash (tried, seen a day ago) takes the one job.
			jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(91*day), "--limit", "1", "-o", "-"))
			if len(jobs) != 1 || schema.Hex(jobs[0].InfoHash) != tried {
				t.Fatalf("jobs %+v, want %s only", jobs, tried)
			}
			stats := filepath.Join(t.TempDir(), "merge.json")
			mustRun(t, resultsArrow(t, fakeFetch(jobs, t0.Add(91*day))), "merge", "--data", data, "--far-now",
				"--now", at(91*day+time.Minute), "--stats-json", stats, "-")
			wantArchived, oldTier := 0, schema.TierHot
			if tt.wantCold {
				wantArchived, oldTier = 2, schema.TierCold
			}
			var ms struct {
				Archived int `json:"archived_to_cold"`
			}
			if b, err := os.ReadFile(stats); err != nil || json.Unmarshal(b, &ms) != nil || ms.Archived != wantArchived {
				t.Fatalf("merge archived %d (%v), want %d", ms.Archived, err, wantArchived)
			}
			checkTiers(t, data, map[string]string{oldA: oldTier, oldB: oldTier, recent: schema.TierHot, tried: schema.TierHot})

			var st struct {
				Waves map[string]map[string]map[string]int `json:"retry_waves_by_tier_and_kind"`
			}
			if err := json.Unmarshal(mustRun(t, nil, "status", "--data", data, "--far-now", "--now", at(92*day), "--format", "json"), &st); err != nil {
				t.Fatal(err)
			}
			if got := st.Waves[schema.TierCold]["new"]["overdue"]; got != wantArchived {
				t.Errorf("status: %d overdue cold new hashes, want %d (%v)", got, wantArchived, st.Waves)
			}

			// The cold sweep's first window holds partition 0a.
			planStats := filepath.Join(t.TempDir(), "plan.json")
			jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(92*day), "--limit", "10",
				"-o", "-", "--stats-json", planStats))
			reasons := map[string]string{}
			for _, j := range jobs {
				reasons[schema.Hex(j.InfoHash)] = j.Reason
			}
			wantOld := schema.ReasonNew
			if tt.wantCold {
				wantOld = schema.ReasonCold
			}
			want := map[string]string{oldA: wantOld, oldB: wantOld, recent: schema.ReasonNew, tried: schema.ReasonRetry}
			if len(reasons) != len(want) {
				t.Fatalf("jobs %v, want %v", reasons, want)
			}
			for h, r := range want {
				if reasons[h] != r {
					t.Errorf("%s planned as %q, want %q", h, reasons[h], r)
				}
			}
			var ps struct {
				DueNew  int `json:"due_new"`
				DueCold int `json:"due_cold"`
			}
			if b, err := os.ReadFile(planStats); err != nil || json.Unmarshal(b, &ps) != nil {
				t.Fatalf("plan stats: %v", err)
			}
			if ps.DueCold != wantArchived || ps.DueNew != 3-wantArchived {
				t.Errorf("due_cold %d, due_new %d; want %d, %d", ps.DueCold, ps.DueNew, wantArchived, 3-wantArchived)
			}
			if !tt.wantCold {
				return
			}
			// A sighting brings a cold never-tried hash back hot (its
			// lease stays: it is planned as new once the lease ends).
			dedupList(t, data, at(93*day), oldA)
			checkTiers(t, data, map[string]string{oldA: schema.TierHot, oldB: schema.TierCold})
			jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(94*day), "--limit", "10", "-o", "-"))
			for _, j := range jobs {
				if schema.Hex(j.InfoHash) == oldA && j.Reason != schema.ReasonNew {
					t.Errorf("%s, sighted again, planned as %q, want new", oldA, j.Reason)
				}
			}
		})
	}
}

// dedupList dedups a list of hex hashes into data, sighted at when.
func dedupList(t *testing.T, data, when string, hashes ...string) {
	t.Helper()
	list := filepath.Join(t.TempDir(), "h.txt")
	if err := os.WriteFile(list, []byte(strings.Join(hashes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", when, list)
}

// checkTiers fails the test unless each hash of want has its tier in
// the state's export.
func checkTiers(t *testing.T, data string, want map[string]string) {
	t.Helper()
	state := stateCSV(t, data)
	for h, tier := range want {
		if line := lineOf(state, h); line == "" || !strings.Contains(line, ","+tier+",") {
			t.Fatalf("%s is not %s:\n%s", h, tier, state)
		}
	}
}
