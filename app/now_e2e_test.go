package app

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// onClock checks that the timestamps ms (what names them) lie on a clock
// set to at when start was the wall clock's time: between at and at plus
// the real time elapsed since start.
func onClock(t *testing.T, what string, ms int64, at, start time.Time) {
	t.Helper()
	if end := at.Add(time.Since(start)); ms < at.UnixMilli() || ms > end.UnixMilli() {
		t.Errorf("%s %v, want on the --now clock: between %v and %v", what, schema.Time(ms), at, end)
	}
}

func readRows[T any](t *testing.T, path string) []T {
	t.Helper()
	r, err := rowio.Open[T](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCaptureNow: capture --now TIME on the loopback testnet stamps
// observed_at (and the default run ID) from TIME on, not by the wall
// clock. TIME is years back from the wall clock, whatever its year (a
// fixed 2020 was refused, more than 10 years back, from 2030 on). The
// capture ends on its first observation (--max-observations 1), whenever
// the testnet's searchers reach it: a --duration of 3 s was a window a
// loaded machine could spend before any did; a minute only bounds a hang.
func TestCaptureNow(t *testing.T) {
	truth := captureTestnet(t).Truth()
	at := time.Now().UTC().AddDate(-6, 0, 0).Truncate(time.Second)
	out := filepath.Join(t.TempDir(), "obs.parquet")
	start := time.Now()
	cmd := exec.Command(infohashBinary(t), "capture", "--now", at.Format(time.RFC3339), "-o", out,
		"--bootstrap", strings.Join(truth.Bootstrap, ","), "--dht-listen", "127.0.0.1:0", "--duration", "1m", "--max-observations", "1", "--dht-rate", "100000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	rows := readRows[schema.Observation](t, out)
	if len(rows) == 0 {
		t.Fatalf("no observations; stderr:\n%s", stderr.String())
	}
	for _, r := range rows {
		onClock(t, "observed_at", r.ObservedAt, at, start)
		if want := "capture-" + at.Format("20060102T150405Z"); r.RunID != want {
			t.Fatalf("run_id %q, want %q (the default, on the --now clock)", r.RunID, want)
		}
	}
}

// TestFetchNow: fetch --now TIME stamps attempted_at and peer_failures'
// at from TIME on, and takes a lease_until after TIME as live, although
// the wall clock is years past it (whatever its year, as in
// TestCaptureNow).
func TestFetchNow(t *testing.T) {
	dir := t.TempDir()
	good := badpeers.NewTorrent(31, 1, 5)
	goodPeer := fetchPeer(t, badpeers.Good, good)
	reject := fetchPeer(t, badpeers.Reject)
	at := time.Now().UTC().AddDate(-6, 0, 0).Truncate(time.Second)
	lease := at.Add(time.Hour).UnixMilli()
	jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	writeJobs(t, jobs, []schema.Job{
		{InfoHash: good.InfoHash, HashType: 1, Attempt: 1, LeaseID: "x", LeaseUntil: lease, Peers: []string{goodPeer.Addr()}},
		{InfoHash: schema.Hash{0xd1}, HashType: 1, Attempt: 2, LeaseID: "x", LeaseUntil: lease, Peers: []string{reject.Addr()}},
	})
	start := time.Now()
	if r := ih(t, nil, "fetch", "--now", at.In(time.FixedZone("", 2*3600)).Format(time.RFC3339), "--no-dht", "--dht-listen", "127.0.0.1:0", jobs, "-o", results); r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	rows := readRows[schema.Result](t, results)
	if len(rows) != 2 {
		t.Fatalf("%d results, want both jobs attempted (their leases are live on the --now clock)", len(rows))
	}
	failures := 0
	for _, r := range rows {
		onClock(t, "attempted_at", r.AttemptedAt, at, start)
		for _, pf := range r.PeerFailures {
			onClock(t, "peer_failures.at", pf.At, at, start)
			failures++
		}
	}
	if failures != 1 {
		t.Errorf("%d peer failures, want the rejecting peer's", failures)
	}
}

// TestNowBadInput: capture and fetch refuse a --now that is no RFC 3339
// time as the other stages do: exit 2, one line, nothing written.
func TestNowBadInput(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{1}}})
	out := filepath.Join(dir, "out.parquet")
	tests := map[string][]string{
		"capture": {"capture", "--now", "yesterday", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms", "-o", out},
		"fetch":   {"fetch", "--now", "yesterday", "--no-dht", jobs, "-o", out},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := runMain(t, args...)
			if want := "infohash: " + name + ": --now: \"yesterday\" is not an RFC 3339 time: want the year (4 digits) at \"yesterday\"\n"; code != 2 || stderr != want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("bad --now left %s (%v)", out, err)
			}
		})
	}
}

// TestPassesOnOneClock: passes whose every stage takes the same --now (a
// short pass by hand; crawl-pass.sh gives each step NOW plus the time
// since the pass began) keep the retry schedule on that clock: a
// hash whose fetch failed waits its backoff (+30m ±20% after a first
// failure, +2h ±20% after a second) from the attempt's --now time. With
// fetch on the wall clock, 100 days behind, every failure was due again
// at the next pass. fetch's one peer source is a --peer that refuses:
// each attempt fails (connect_failed, backed off as no_peers is), where
// no peer source at all would be a local_error, retried soon.
func TestPassesOnOneClock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	hs := seedHashes(t, data, 1, 5)
	t0 := time.Now().Add(100 * 24 * time.Hour).Truncate(time.Hour).UTC()
	refused := refusingAddr(t)
	passes := []struct {
		at      time.Duration
		attempt int32 // the attempt planned, 0 for none
	}{
		{0, 1},                                // new: planned at once; its peer refuses, so it fails
		{20 * time.Minute, 0},                 // due 24m..36m after that failure
		{40 * time.Minute, 2},                 // due; fails again
		{40*time.Minute + 90*time.Minute, 0},  // due 96m..144m after it
		{40*time.Minute + 150*time.Minute, 3}, // due
	}
	for _, p := range passes {
		now := t0.Add(p.at).Format(time.RFC3339)
		dir := t.TempDir()
		jobs, results := filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
		mustRun(t, nil, "plan-retries", "--data", data, "--now", now, "-o", jobs)
		planned := readRows[schema.Job](t, jobs)
		if p.attempt == 0 {
			if len(planned) != 0 {
				t.Fatalf("pass at %s planned attempt %d of a hash whose backoff is not over", now, planned[0].Attempt)
			}
			continue
		}
		if len(planned) != 1 || schema.Hex(planned[0].InfoHash) != hs[0] || planned[0].Attempt != p.attempt {
			t.Fatalf("pass at %s planned %+v, want attempt %d of %s", now, planned, p.attempt, hs[0])
		}
		mustRun(t, nil, "fetch", "--now", now, "--no-dht", "--peer", refused, jobs, "-o", results)
		mustRun(t, nil, "merge", "--data", data, "--now", now, results)
	}
}
