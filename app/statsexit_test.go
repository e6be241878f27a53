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

	"github.com/infohash/infohash/formats/fsutil"
)

// TestStatsJSONOnEveryExit: every stage writes --stats-json on every exit
// it writes --metrics-file on (all but a usage error): its counters when
// it got to write them, else {"exit_status": N} alone. A run locked out
// (75), given bad input (2), failing before its commit (1) or interrupted
// before it started (130) used to leave the old file in place, which read
// as the last run's counters.
func TestStatsJSONOnEveryExit(t *testing.T) {
	dir, data := seedDataset(t)
	_, other := seedDataset(t)
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := write("list.txt", "1111111111111111111111111111111111111111\n")
	fresh := write("fresh.txt", "2222222222222222222222222222222222222222\n") // in no dataset yet
	bad := write("bad.txt", "garbage\n")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	// A dataset whose staging folder is a file: a writer fails (exit 1)
	// before its commit.
	broken := filepath.Join(dir, "broken")
	if _, stderr, code := runMain(t, "dedup", "--data", broken, list); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	if err := os.RemoveAll(filepath.Join(broken, "staging")); err != nil {
		t.Fatal(err)
	}
	write("broken/staging", "")
	out := func(name string) string { return filepath.Join(dir, "out", name) }
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	lockData := func(t *testing.T) func() {
		f, err := os.OpenFile(filepath.Join(data, "LOCK"), os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		return func() { f.Close() }
	}
	lockState := func(name string) func(t *testing.T) func() {
		return func(t *testing.T) func() {
			release, err := fsutil.TryLockDir(filepath.Join(dir, "state"), name)
			if err != nil {
				t.Fatal(err)
			}
			return release
		}
	}
	dht := []string{"--dht-state", filepath.Join(dir, "state"), "--bootstrap", "", "--dht-listen", "127.0.0.1:0"}
	const old = `{"old": true}` + "\n"
	for _, tt := range []struct {
		name      string
		args      []string // the command, then its arguments; --stats-json is added
		hold      func(t *testing.T) func()
		cancelled bool // run under a context already cancelled, as after SIGINT
		exit      int
		want      string // a key of the file written; "": a usage error leaves the old file
	}{
		{name: "dedup ok", args: []string{"dedup", "--data", data, list}, want: "inputs"},
		{name: "dedup locked", args: []string{"dedup", "--data", data, fresh}, hold: lockData, exit: 75, want: "exit_status"},
		{name: "dedup bad input", args: []string{"dedup", "--data", data, bad}, exit: 2, want: "exit_status"},
		{name: "dedup error", args: []string{"dedup", "--data", broken, fresh}, exit: 1, want: "exit_status"},
		{name: "dedup interrupted", args: []string{"dedup", "--data", data, fresh}, cancelled: true, exit: 130, want: "exit_status"},
		{name: "merge locked", args: []string{"merge", "--data", data, "--from", other}, hold: lockData, exit: 75, want: "exit_status"},
		{name: "merge interrupted", args: []string{"merge", "--data", data, "--from", other}, cancelled: true, exit: 130, want: "exit_status"},
		{name: "merge bad input", args: []string{"merge", "--data", data, bad}, exit: 2, want: "exit_status"},
		{name: "plan-retries locked", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, hold: lockData, exit: 75, want: "exit_status"},
		{name: "plan-retries error", args: []string{"plan-retries", "--data", broken, "-o", out("jobs.parquet")}, exit: 1, want: "exit_status"},
		{name: "plan-retries interrupted", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, cancelled: true, exit: 130, want: "exit_status"},
		{name: "capture locked", args: append([]string{"capture", "--duration", "1s", "-o", out("obs1.parquet")}, dht...),
			hold: lockState("lock"), exit: 75, want: "exit_status"},
		{name: "fetch locked", args: append([]string{"fetch", "-o", out("r2.parquet"), list}, dht...),
			hold: lockState("fetch.lock"), exit: 75, want: "exit_status"},
		{name: "fetch bad input", args: []string{"fetch", "--no-dht", "-o", out("r3.parquet"), bad}, exit: 2, want: "exit_status"},
		{name: "export bad input", args: []string{"export", "--data", empty, "-o", out("x.csv")}, exit: 2, want: "exit_status"},
		{name: "export interrupted", args: []string{"export", "--data", data, "-o", out("x.csv")}, cancelled: true, exit: 130, want: "exit_status"},

		{name: "usage: unknown flag", args: []string{"dedup", "--data", data, "--bogus", list}, exit: 2},
		{name: "usage: bad --now", args: []string{"merge", "--data", data, "--now", "yesterday", list}, exit: 2},
		{name: "usage: no --data", args: []string{"plan-retries", "-o", out("jobs.parquet")}, exit: 2},
		{name: "usage: stray argument", args: append([]string{"capture", "-o", out("obs.parquet"), "extra"}, dht...), exit: 2},
		{name: "usage: bad --tier", args: []string{"export", "--data", data, "--tier", "warm", "-o", out("x.csv")}, exit: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stats := filepath.Join(dir, "out", tt.args[0]+".json")
			if err := os.WriteFile(stats, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.hold != nil {
				defer tt.hold(t)()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			args := append([]string{"infohash"}, tt.args...)
			args = append(args, "--stats-json", stats)
			var stdout, stderr bytes.Buffer
			if code := run(ctx, args, strings.NewReader(""), &stdout, &stderr); code != tt.exit {
				t.Fatalf("exit %d, want %d: %s", code, tt.exit, stderr.String())
			}
			b, err := os.ReadFile(stats)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if string(b) != old {
					t.Fatalf("a usage error replaced --stats-json:\n%s", b)
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("--stats-json is not JSON: %v\n%s", err, b)
			}
			if _, ok := got[tt.want]; !ok {
				t.Fatalf("--stats-json has no %q:\n%s", tt.want, b)
			}
			if tt.want == "exit_status" && (len(got) != 1 || got["exit_status"] != float64(tt.exit)) {
				t.Errorf("--stats-json %s, want {\"exit_status\": %d} alone", b, tt.exit)
			}
		})
	}
	// With --metrics-file too, both are written, with the same status.
	t.Run("dedup locked, both reports", func(t *testing.T) {
		defer lockData(t)()
		stats, prom := out("both.json"), out("both.prom")
		var stdout, stderr bytes.Buffer
		args := []string{"infohash", "dedup", "--data", data, fresh, "--stats-json", stats, "--metrics-file", prom}
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 75 {
			t.Fatalf("exit %d, want 75: %s", code, stderr.String())
		}
		b, err := os.ReadFile(stats)
		if err != nil || !strings.Contains(string(b), `"exit_status": 75`) {
			t.Errorf("--stats-json %q, %v", b, err)
		}
		p, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		if got := sample(t, string(p), "infohash_dedup_exit_status"); got != 75 {
			t.Errorf("metrics exit_status %v, want 75", got)
		}
	})
}
