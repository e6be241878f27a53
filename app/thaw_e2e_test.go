package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestArchivedHashSeenAgainIsPlannedAtOnce: a hash merge archived (cold
// tier) and dedup then sights is planned by the next pass as reactivated:
// the batch wrote it into a hot file (thaw), and the hash it left in the
// cold file stays cold.
func TestArchivedHashSeenAgainIsPlannedAtOnce(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	seen := "aa01000000000000000000000000000000000000" // archived, then sighted
	dormant := "aa02000000000000000000000000000000000000"
	list := filepath.Join(t.TempDir(), "h.txt")
	os.WriteFile(list, []byte(seen+"\n"+dormant+"\n"), 0o644)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", at(0), list)
	// Archive after one failure and an hour unseen; a failure waits 7 days.
	mustRun(t, nil, "policy", "set", "--data", data, "archive.min_attempts=1", "archive.unseen=1h", "backoff.no_peers=7d")
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(2*time.Hour), "-o", "-"))
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want both hashes", len(jobs))
	}
	mustRun(t, resultsArrow(t, fakeFetch(jobs, now.Add(2*time.Hour))), "merge", "--data", data, "--far-now", "--now", at(2*time.Hour+time.Minute), "-")
	cold := func() []string {
		fs, _ := filepath.Glob(filepath.Join(data, "state", "current", "prefix=aa", schedule.ColdPrefix+"*.parquet"))
		return fs
	}
	if len(cold()) != 1 {
		t.Fatalf("after the failures: cold files %v, want the two hashes archived", cold())
	}
	again := filepath.Join(t.TempDir(), "again.txt")
	os.WriteFile(again, []byte(seen+"\n"), 0o644)
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", at(3*time.Hour), again)
	if len(cold()) != 1 {
		t.Fatalf("after the sighting: cold files %v, want the dormant hash's", cold())
	}
	state := stateCSV(t, data)
	for h, tier := range map[string]string{seen: schema.TierHot, dormant: schema.TierCold} {
		if !strings.Contains(state, h+",") || !strings.Contains(lineOf(state, h), ","+tier+",") {
			t.Fatalf("%s is not %s:\n%s", h, tier, state)
		}
	}
	jobs = decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at(3*time.Hour+30*time.Minute), "-o", "-"))
	// The dormant hash may come in the cold sweep's reserve, not as reactivated.
	reasons := map[string]string{}
	for _, j := range jobs {
		reasons[schema.Hex(j.InfoHash)] = j.Reason
	}
	if reasons[seen] != schema.ReasonReactivated || reasons[dormant] == schema.ReasonReactivated {
		t.Fatalf("jobs %+v, want %s reactivated", jobs, seen)
	}
}

// lineOf returns the line of text that holds s.
func lineOf(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
