package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestArchivedHashSeenAgainIsPlannedAtOnce: a hash merge archived (cold
// tier) and dedup then sights is planned by the next pass as reactivated,
// and the other hash archived with it stays cold. (Merge archives the
// two in place, tier cold in their hot file, which dedup then splices;
// were they in a cold file, dedup would thaw the sighted one out of it.)
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
	tiers := func(when string, want map[string]string) {
		t.Helper()
		state := stateCSV(t, data)
		for h, tier := range want {
			if !strings.Contains(state, h+",") || !strings.Contains(lineOf(state, h), ","+tier+",") {
				t.Fatalf("%s: %s is not %s:\n%s", when, h, tier, state)
			}
		}
	}
	tiers("after the failures", map[string]string{seen: schema.TierCold, dormant: schema.TierCold})
	again := filepath.Join(t.TempDir(), "again.txt")
	os.WriteFile(again, []byte(seen+"\n"), 0o644)
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", at(3*time.Hour), again)
	tiers("after the sighting", map[string]string{seen: schema.TierHot, dormant: schema.TierCold})
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
