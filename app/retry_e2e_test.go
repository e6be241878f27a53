package app

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// retryBinary is the real binary, built once per test process (see
// infohashBinary in capture_test.go).
func retryBinary(t *testing.T) string { return infohashBinary(t) }

type cliRun struct {
	stdout []byte
	stderr string
	code   int
}

func ih(t *testing.T, stdin []byte, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, retryBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliRun{out.Bytes(), errb.String(), code}
}

func mustRun(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	r := ih(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("infohash %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// seedHashes creates a dataset of n random hashes (dedup of a hash list)
// and returns their hex forms.
func seedHashes(t *testing.T, data string, n int, seed uint64) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	hs := make([]string, n)
	for i := range hs {
		var h schema.Hash
		for j := range h {
			h[j] = byte(r.UintN(256))
		}
		hs[i] = schema.Hex(h)
		b.WriteString(hs[i] + "\n")
	}
	list := filepath.Join(t.TempDir(), "hashes.txt")
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", list)
	return hs
}

func decodeJobs(t *testing.T, b []byte) []schema.Job {
	t.Helper()
	r, err := rowio.Open[schema.Job]("-", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func resultsArrow(t *testing.T, rs []schema.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := rowio.Create[schema.Result]("-", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeFetch answers every job with no_peers, except that it "fetches"
// one made-up torrent whose hash it also returns.
func fakeFetch(jobs []schema.Job, at time.Time) []schema.Result {
	out := make([]schema.Result, len(jobs))
	for i, j := range jobs {
		out[i] = schema.Result{InfoHash: j.InfoHash, HashType: j.HashType, Attempt: j.Attempt, LeaseID: j.LeaseID,
			AttemptedAt: at.UnixMilli(), Outcome: schema.OutcomeNoPeers, PeerFailures: []schema.PeerFailure{}}
	}
	return out
}

func stateCSV(t *testing.T, data string) string {
	t.Helper()
	return string(mustRun(t, nil, "export", "--data", data, "--table", "state", "--format", "csv", "-o", "-"))
}

func TestPlanFetchMergeCLI(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	hs := seedHashes(t, data, 300, 1)
	at := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	stats := filepath.Join(t.TempDir(), "plan.json")
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at.Format(time.RFC3339),
		"--limit", "100", "-o", "-", "--stats-json", stats))
	if len(jobs) != 100 {
		t.Fatalf("planned %d jobs, want 100", len(jobs))
	}
	if b, _ := os.ReadFile(stats); !strings.Contains(string(b), `"planned": 100`) {
		t.Errorf("stats: %s", b)
	}
	// A verified ok for one job: its info dictionary must hash to it, so the
	// dataset learns a made-up torrent under its own hash.
	info := []byte("d6:lengthi1e4:name1:a12:piece lengthi16384e6:pieces20:aaaaaaaaaaaaaaaaaaaae")
	okHash := sha1.Sum(info)
	rs := fakeFetch(jobs, at.Add(time.Minute))
	rs = append(rs, schema.Result{InfoHash: okHash, HashType: 1, AttemptedAt: at.Add(time.Minute).UnixMilli(),
		Outcome: schema.OutcomeOK, ResultMeta: schema.OKMeta(schema.Meta{Name: new("a"), NameRaw: []byte("a"), NameUTF8Valid: true, InfoBytes: info})})
	mustRun(t, resultsArrow(t, rs), "merge", "--data", data, "--far-now", "--now", at.Add(2*time.Minute).Format(time.RFC3339), "-")
	csv := stateCSV(t, data)
	if n := strings.Count(csv, ",failed,"); n != 100 {
		t.Errorf("%d failed hashes after merge, want 100", n)
	}
	if !strings.Contains(csv, schema.Hex(okHash)) || strings.Count(csv, ",fetched,") != 1 {
		t.Errorf("the fetched torrent is not in the state")
	}
	if len(strings.Split(strings.TrimSpace(csv), "\n")) != len(hs)+2 { // header + 300 + the new hash
		t.Errorf("state rows: %d", len(strings.Split(strings.TrimSpace(csv), "\n")))
	}
	// The next pass plans the 200 never tried; the 100 failures wait 30m.
	next := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", at.Add(10*time.Minute).Format(time.RFC3339), "-o", "-"))
	if len(next) != 200 {
		t.Fatalf("second pass planned %d, want the 200 new ones", len(next))
	}
	for _, j := range next {
		if j.Reason != schema.ReasonNew {
			t.Fatalf("second pass planned a %s job", j.Reason)
		}
	}
	if r := ih(t, nil, "plan-retries", "--data", data, "--limit", "-1", "-o", "-"); r.code != 2 || !strings.Contains(r.stderr, "--limit") {
		t.Errorf("--limit -1: exit %d %s", r.code, r.stderr)
	}
	if r := ih(t, []byte("not arrow"), "merge", "--data", data, "-"); r.code != 2 {
		t.Errorf("garbage on stdin: exit %d %s", r.code, r.stderr)
	}
	if r := ih(t, nil, "merge", "--data", data); r.code != 0 {
		// the garbage spooled above was renamed aside: no leftover, no input
		if r.code != 2 || !strings.Contains(r.stderr, "no input") {
			t.Errorf("merge without input: exit %d %s", r.code, r.stderr)
		}
	}
}

// TestDormantHashSeenAgainIsReactivated: a hash deep in its backoff (7
// days after five no_peers) is not planned; once dedup sees it again, the
// next pass plans it with reason reactivated.
func TestDormantHashSeenAgainIsReactivated(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ih")
	h := "0123456789abcdef0123456789abcdef01234567"
	list := filepath.Join(t.TempDir(), "h.txt")
	os.WriteFile(list, []byte(h+"\n"), 0o644)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", now.Format(time.RFC3339), list)
	for _, d := range []time.Duration{0, 37 * time.Minute, 145 * time.Minute, 10 * time.Hour, 29 * time.Hour} {
		now = now.Add(d)
		jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", now.Format(time.RFC3339), "-o", "-"))
		if len(jobs) != 1 {
			t.Fatalf("at %s: %d jobs, want the hash (due)", now, len(jobs))
		}
		mustRun(t, resultsArrow(t, fakeFetch(jobs, now)), "merge", "--data", data, "--far-now", "--now", now.Add(time.Minute).Format(time.RFC3339), "-")
	}
	later := now.Add(2 * 24 * time.Hour) // the fifth failure waits ~7 days
	if jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", later.Format(time.RFC3339), "-o", "-")); len(jobs) != 0 {
		t.Fatalf("a dormant hash was planned before it was seen: %+v", jobs)
	}
	again := filepath.Join(t.TempDir(), "again.txt") // new content: the ledger would skip the same file
	os.WriteFile(again, []byte("# seen again\n"+h+"\n"), 0o644)
	mustRun(t, nil, "dedup", "--data", data, "--far-now", "--now", later.Format(time.RFC3339), again)
	// Due within reactivation.spread (30m) of the sighting.
	jobs := decodeJobs(t, mustRun(t, nil, "plan-retries", "--data", data, "--far-now", "--now", later.Add(30*time.Minute).Format(time.RFC3339), "-o", "-"))
	if len(jobs) != 1 || jobs[0].Reason != schema.ReasonReactivated || jobs[0].Attempt != 6 {
		t.Fatalf("after the sighting: %+v, want one job with reason reactivated (attempt 6)", jobs)
	}
}
