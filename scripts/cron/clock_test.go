package cron

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A simulated pass (NOW) runs on one clock, as a pass on the wall clock
// does: each step's --now is NOW plus the time elapsed since the pass
// began. A dormant failed hash sighted a while into capture is reactivated
// by dedup (next_retry at its sighting: the policy's reactivation delay
// and spread are 0) and planned by the same pass's plan-retries. With the
// same NOW for every step, capture's clock ran on past NOW while
// plan-retries' stayed there, before the sighting: the hash was not due,
// and was planned a pass late. Every step's --now is logged, and later
// steps' are later.
func TestCrawlPassOneClock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	ih(t, "policy", "set", "--data", data, "jitter=0", "backoff.connect_failed=1d", "reactivation.spread=0s")
	hash := strings.Repeat("5a", 20) // what getPeers asks capture for
	seed := filepath.Join(t.TempDir(), "seed.txt")
	hexList(t, seed, hash)
	// Three days ago on the wall clock (a simulated pass, not a fixed
	// date): the hash is seen, tried on a loopback port that refuses, and
	// fails as connect_failed, due again a day later: dormant. (With no
	// peer source at all, fetch writes local_error, which backs nothing off.)
	t0 := time.Now().UTC().Add(-72 * time.Hour).Truncate(time.Second)
	at := t0.Format(time.RFC3339)
	jobs, results := filepath.Join(t.TempDir(), "jobs.parquet"), filepath.Join(t.TempDir(), "results.parquet")
	ih(t, "dedup", "--data", data, "--now", at, seed)
	ih(t, "plan-retries", "--data", data, "--now", at, "-o", jobs)
	ih(t, "fetch", "--now", at, "--bootstrap", "", "--peer", "127.0.0.1:1", "--timeout", "1s", "--deadline", "2s", jobs, "-o", results)
	ih(t, "merge", "--data", data, "--now", at, results)
	if got := column(t, data, "state", "last_failure"); len(got) != 1 || got[0] != "connect_failed" {
		t.Fatalf("setup: last_failure %v, want [connect_failed]", got)
	}

	now := t0.Add(2 * time.Hour)
	// The capture ends on its one sighting (--max-observations 1), not at
	// a --duration the sighting must come before: a minute only bounds a
	// hang, and the pass's steps all fall within it.
	p := startPass(t, data, "s1", "1m", "NOW="+now.Format(time.RFC3339),
		"CAPTURE_ARGS=--dht-listen 127.0.0.1:0 --max-observations 1")
	addr := p.log.waitFor(t, regexp.MustCompile(`capture: listening.* addr=(\S+)`))
	// Sighted a while into the capture: at least a second after NOW on
	// its clock, which a plan-retries at NOW would read as not yet due.
	time.Sleep(time.Second)
	getPeers(t, addr)
	if got := p.wait(t); got != 0 {
		t.Fatalf("pass s1: exit %d, want 0; log:\n%s", got, p.log)
	}
	log := p.log.String()
	work := filepath.Join(data, "work", "s1")
	if n := statsJSON(t, filepath.Join(work, "dedup.json"))["reactivated"]; n != 1 {
		t.Fatalf("dedup reactivated %v hashes, want the sighted one; log:\n%s", n, log)
	}
	plan := statsJSON(t, filepath.Join(work, "plan.json"))
	if plan["planned_reactivated"] != 1 || plan["not_due"] != 0 {
		t.Errorf("plan-retries planned %v reactivated hashes (%v not due), want the one sighted in this pass's capture; log:\n%s",
			plan["planned_reactivated"], plan["not_due"], log)
	}

	// The steps' --now, in the order they ran: from NOW on, each later
	// than the one before, and none past NOW plus the pass's bound (startPass).
	var last time.Time
	steps := regexp.MustCompile(`crawl-pass s1: (\S+): \S+ \S+ .*--now (\S+) `).FindAllStringSubmatch(log, -1)
	if len(steps) != 5 {
		t.Fatalf("%d steps logged with --now, want capture, dedup, plan-retries, fetch, merge; log:\n%s", len(steps), log)
	}
	for _, m := range steps {
		got, err := time.Parse(time.RFC3339Nano, m[2])
		if err != nil {
			t.Fatalf("%s --now %s: %v", m[1], m[2], err)
		}
		if !got.After(last) || got.Before(now) || got.After(now.Add(2*time.Minute)) {
			t.Errorf("%s --now %s: want after %s (the step before, or NOW) and within the pass", m[1], m[2], last.Format(time.RFC3339Nano))
		}
		last = got
	}
}

// A SIGTERM to the whole pass as it reads a step's clock (infohash clock
// --started) ends that clock read too: the pass stops as interrupted (130,
// one "interrupted" line), as for a step the signal stopped, not as a
// failed step (exit 1).
func TestCrawlPassSignalDuringClock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	// An infohash whose clock --started signals the pass and itself, as a
	// SIGTERM to the process group does.
	wrapper := script(t, "infohash", `case " $* " in *" --started "*) kill -TERM $PPID; kill -TERM $$ ;; esac
exec `+bin+` "$@"`)
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	log := runPass(t, data, "i1", "1s", 130, "INFOHASH="+wrapper, "NOW="+now)
	if n := strings.Count(log, "crawl-pass i1: clock: interrupted (exit 130)"); n != 1 {
		t.Errorf("%d \"clock: interrupted\" lines, want 1; log:\n%s", n, log)
	}
	if strings.Contains(log, "capture: ") {
		t.Errorf("capture ran after the signal; log:\n%s", log)
	}
}
