package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// goneAfterCommit is a stdout whose reader goes away after plan-retries
// asked, just before its commit, whether it was still there: it has no
// descriptor to ask about, and every write fails as a closed pipe does.
type goneAfterCommit struct{}

func (goneAfterCommit) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
}

// TestPlanRetriesBrokenPipeSaysWhatStaysLeased: "plan-retries -o - |
// fetch - -o -" ends with the reader gone after the leases were
// committed (the window after plan-retries' last look at its reader).
// Exit 141 is otherwise silent ("| head" has what it wanted), but here
// the reader saw none of the jobs it leased: one line says how many stay
// leased until when, in the logs' format.
func TestPlanRetriesBrokenPipeSaysWhatStaysLeased(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra []string
		want  []string
	}{
		{"text", nil, []string{"level=WARN", "2 jobs stay leased until 2026-03-01T02:00:00Z", "jobs=2"}},
		{"json", []string{"--log-format", "json"}, []string{`"level":"WARN"`, "2 jobs stay leased until 2026-03-01T02:00:00Z", `"jobs":2`, `"lease_until":"2026-03-01T02:00:00Z"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, data := seedDataset(t)
			var stderr bytes.Buffer
			args := append([]string{"infohash", "plan-retries", "--data", data, "--now", "2026-03-01T00:00:00Z", "--limit", "5000", "-o", "-"}, tt.extra...)
			code := run(context.Background(), args, strings.NewReader(""), goneAfterCommit{}, &stderr)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			var line string
			for _, l := range lines {
				if strings.Contains(l, "stay leased") {
					if line != "" {
						t.Fatalf("more than one line about the leases:\n%s", stderr.String())
					}
					line = l
				}
			}
			if code != 141 {
				t.Fatalf("exit %d, want 141: %s", code, stderr.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(line, want) {
					t.Errorf("line %q lacks %q (stderr:\n%s)", line, want, stderr.String())
				}
			}
		})
	}
	// With nothing planned, nothing stays leased: 141 stays quiet.
	_, data := seedDataset(t)
	if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--now", "2026-03-01T00:00:00Z", "-o", os.DevNull); code != 0 {
		t.Fatalf("plan-retries: exit %d: %s", code, stderr)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"infohash", "plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", "-"}, strings.NewReader(""), w, &stderr)
	if code == 141 && strings.Contains(stderr.String(), "stay leased") {
		t.Fatalf("nothing leased, yet: %s", stderr.String())
	}
}

// TestPlanRetriesReaderGoneLeasesNothing: "plan-retries -o - | fetch -
// -o -" whose fetch exited at once (its --dht-state in use: exit 75)
// finds its stdout's reader gone before it commits: it leases nothing,
// exits 141 and says so in one line, and the next run plans the same
// hashes.
func TestPlanRetriesReaderGoneLeasesNothing(t *testing.T) {
	dir, data := seedDataset(t)
	var stderr bytes.Buffer
	args := []string{"infohash", "plan-retries", "--data", data, "--now", "2026-03-01T00:00:00Z", "-o", "-"}
	if code := run(context.Background(), args, strings.NewReader(""), readerGone(t), &stderr); code != 141 {
		t.Fatalf("exit %d, want 141: %s", code, stderr.String())
	}
	want := "the output's reader went away before the leases were committed: nothing leased (the 2 jobs planned were dropped; their hashes stay due)"
	if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, want) || strings.Contains(got, "stay leased") {
		t.Fatalf("stderr %q, want one line saying %q", got, want)
	}
	out, stderrs, code := runMain(t, "status", "--data", data)
	if code != 0 || !strings.Contains(out, "(0 leased to fetch jobs") || !strings.Contains(out, "snapshot 1 by dedup") {
		t.Fatalf("status: exit %d, want nothing leased and no new snapshot:\n%s%s", code, out, stderrs)
	}
	jobs := filepath.Join(dir, "jobs.parquet")
	if _, stderrs, code := runMain(t, "plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", jobs); code != 0 || !strings.Contains(stderrs, "planned=2") {
		t.Fatalf("next plan-retries: exit %d, want 2 jobs planned: %s", code, stderrs)
	}
}
