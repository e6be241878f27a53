package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
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
			dir, data := seedDataset(t)
			var stderr bytes.Buffer
			statsPath := filepath.Join(dir, "plan.json")
			args := append([]string{"infohash", "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--limit", "5000", "-o", "-",
				"--stats-json", statsPath}, tt.extra...)
			code := run(context.Background(), args, strings.NewReader(""), goneAfterCommit{}, &stderr)
			// The report says the jobs are leased, and their reader gone.
			if stats := readPlanStats(t, statsPath); stats["reader_gone"] != true || stats["planned"] != 2.0 || stats["planned_dropped"] != 0.0 {
				t.Errorf("--stats-json %v, want reader_gone, 2 planned, none dropped", stats)
			}
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
}

// TestPlanRetriesReaderGoneNothingPlanned: a run that plans nothing
// (nothing due, or --limit 0) to a pipe whose reader is gone exits 141
// as every run to such a pipe does, and says in one line what it leased
// (nothing, and why), as README promises for plan-retries' 141; its
// --stats-json says reader_gone. It used to exit 141 without a line or a
// report. A run that commits only the drop of stale leases says the
// same; a dry run (--limit 0) drops none: it commits nothing.
func TestPlanRetriesReaderGoneNothingPlanned(t *testing.T) {
	tests := []struct {
		name      string
		now       string // the planning run's
		extra     []string
		blocklist bool // both hashes blocklisted after they were leased
		want      string
		due       float64
		committed bool // stale leases dropped: a commit
	}{
		{"nothing due", "2026-03-01T00:01:00Z", nil, false, "nothing leased (nothing was due)", 0, false},
		{"stale leases dropped", "2026-03-10T00:00:00Z", nil, true, "nothing leased (nothing was due)", 0, true},
		{"limit 0 keeps stale leases", "2026-03-10T00:00:00Z", []string{"--limit", "0"}, false, "nothing leased (none planned of the 2 due)", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, data := seedDataset(t)
			// Both hashes leased until 02:00.
			if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-o", fsutiltest.NullDevice(t)); code != 0 {
				t.Fatalf("plan-retries: exit %d: %s", code, stderr)
			}
			if tt.blocklist {
				list := "0123456789abcdef0123456789abcdef01234567\nfedcba9876543210fedcba9876543210fedcba98\n"
				if err := os.WriteFile(filepath.Join(data, "blocklist"), []byte(list), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			snap, _ := currentManifest(t, data)
			statsPath := filepath.Join(dir, "plan.json")
			var stderr bytes.Buffer
			args := append([]string{"infohash", "plan-retries", "--data", data, "--far-now", "--now", tt.now, "-o", "-", "--stats-json", statsPath}, tt.extra...)
			if code := run(context.Background(), args, strings.NewReader(""), readerGone(t), &stderr); code != 141 {
				t.Fatalf("exit %d, want 141: %s", code, stderr.String())
			}
			if got := stderr.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "the output's reader went away: "+tt.want) {
				t.Errorf("stderr %q, want one line saying %q", got, tt.want)
			}
			stats := readPlanStats(t, statsPath)
			if stats["reader_gone"] != true || stats["planned"] != 0.0 || stats["planned_dropped"] != 0.0 || stats["due"] != tt.due {
				t.Errorf("--stats-json %v, want reader_gone, nothing planned nor dropped, %v due", stats, tt.due)
			}
			if after, _ := currentManifest(t, data); (after > snap) != tt.committed {
				t.Errorf("snapshot %d after %d: committed %v, want %v", after, snap, after > snap, tt.committed)
			}
		})
	}
}

// TestPlanRetriesReaderGoneLeasesNothing: "plan-retries -o - | fetch -
// -o -" whose fetch exited at once (its --dht-state in use: exit 75)
// finds its stdout's reader gone before it commits: it leases nothing,
// exits 141 and says so in one line, and the next run plans the same
// hashes.
func TestPlanRetriesReaderGoneLeasesNothing(t *testing.T) {
	dir, data := seedDataset(t)
	// A cron wrapper's reports from an earlier run: replaced, not left
	// stale.
	statsPath, metricsPath := filepath.Join(dir, "plan.json"), filepath.Join(dir, "plan.prom")
	for _, p := range []string{statsPath, metricsPath} {
		if err := os.WriteFile(p, []byte("stale\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	args := []string{"infohash", "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-o", "-",
		"--stats-json", statsPath, "--metrics-file", metricsPath}
	if code := run(context.Background(), args, strings.NewReader(""), readerGone(t), &stderr); code != 141 {
		t.Fatalf("exit %d, want 141: %s", code, stderr.String())
	}
	stats := readPlanStats(t, statsPath)
	if stats["reader_gone"] != true || stats["planned"] != 0.0 || stats["planned_dropped"] != 2.0 ||
		stats["due"] != 2.0 || stats["due_unplanned"] != 2.0 || stats["lease_id"] != nil || stats["lease_until"] != nil {
		t.Errorf("--stats-json %v, want reader_gone, 0 planned, 2 dropped, 2 due (2 unplanned), no lease", stats)
	}
	if b, err := os.ReadFile(metricsPath); err != nil || !strings.Contains(string(b), "\ninfohash_plan_retries_reader_gone 1\n") ||
		!strings.Contains(string(b), "\ninfohash_plan_retries_planned 0\n") || !strings.Contains(string(b), "\ninfohash_plan_retries_planned_dropped 2\n") {
		t.Errorf("--metrics-file (err %v):\n%s\nwant reader_gone 1, planned 0, planned_dropped 2", err, b)
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
	if _, stderrs, code := runMain(t, "plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:01:00Z", "-o", jobs); code != 0 || !strings.Contains(stderrs, "planned=2") {
		t.Fatalf("next plan-retries: exit %d, want 2 jobs planned: %s", code, stderrs)
	}
}

// readPlanStats reads the --stats-json file plan-retries wrote at path.
func readPlanStats(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v:\n%s", path, err, b)
	}
	return m
}
