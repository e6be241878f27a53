package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestMetricsOnEveryExit: every stage writes --metrics-file on every exit
// it can end with but a usage error (and 141): exit_status says how it
// ended, and a run that did not exit 0 keeps the last success time of the
// file it replaces. A run locked out (75), given bad input (2), failing
// before its commit (1) or interrupted before it started (130) used to
// leave the old file, exit_status 0, in place.
func TestMetricsOnEveryExit(t *testing.T) {
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
	// lockData holds data's writer lock; lockState a --dht-state's.
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
	// lockFile holds the lock of a file a stream is still written into.
	lockFile := func(p string) func(t *testing.T) func() {
		return func(t *testing.T) func() {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}
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
	const kept = 1600000000
	for _, tt := range []struct {
		name      string
		args      []string // the command, then its arguments; --metrics-file is added
		hold      func(t *testing.T) func()
		cancelled bool // run under a context already cancelled, as after SIGINT
		exit      int
		written   bool // false: a usage error leaves the old file as it was
	}{
		{name: "dedup ok", args: []string{"dedup", "--data", data, list}, exit: 0, written: true},
		{name: "dedup locked", args: []string{"dedup", "--data", data, fresh}, hold: lockData, exit: 75, written: true},
		{name: "dedup bad input", args: []string{"dedup", "--data", data, bad}, exit: 2, written: true},
		{name: "dedup error", args: []string{"dedup", "--data", broken, fresh}, exit: 1, written: true},
		{name: "dedup partial", args: []string{"dedup", "--data", data, fresh}, hold: lockFile(fresh), exit: 3, written: true},
		{name: "dedup interrupted", args: []string{"dedup", "--data", data, fresh}, cancelled: true, exit: 130, written: true},
		{name: "merge locked", args: []string{"merge", "--data", data, "--from", other}, hold: lockData, exit: 75, written: true},
		{name: "merge interrupted", args: []string{"merge", "--data", data, "--from", other}, cancelled: true, exit: 130, written: true},
		{name: "merge bad input", args: []string{"merge", "--data", data, bad}, exit: 2, written: true},
		{name: "plan-retries locked", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, hold: lockData, exit: 75, written: true},
		{name: "plan-retries error", args: []string{"plan-retries", "--data", broken, "-o", out("jobs.parquet")}, exit: 1, written: true},
		{name: "plan-retries interrupted", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, cancelled: true, exit: 130, written: true},
		{name: "capture locked", args: append([]string{"capture", "--duration", "1s", "-o", out("obs1.parquet")}, dht...),
			hold: lockState("lock"), exit: 75, written: true},
		{name: "capture interrupted", args: append([]string{"capture", "--duration", "1m", "-o", out("obs2.parquet")}, dht...),
			cancelled: true, exit: 130, written: true},
		{name: "fetch interrupted", args: append([]string{"fetch", "-o", out("r1.parquet"), list}, dht...), cancelled: true, exit: 130, written: true},
		{name: "fetch locked", args: append([]string{"fetch", "-o", out("r2.parquet"), list}, dht...),
			hold: lockState("fetch.lock"), exit: 75, written: true},
		{name: "fetch bad input", args: []string{"fetch", "--no-dht", "-o", out("r3.parquet"), bad}, exit: 2, written: true},
		{name: "export bad input", args: []string{"export", "--data", empty, "-o", out("x.csv")}, exit: 2, written: true},
		{name: "export interrupted", args: []string{"export", "--data", data, "-o", out("x.csv")}, cancelled: true, exit: 130, written: true},

		{name: "usage: unknown flag", args: []string{"dedup", "--data", data, "--bogus", list}, exit: 2},
		{name: "usage: bad --now", args: []string{"merge", "--data", data, "--now", "yesterday", list}, exit: 2},
		{name: "usage: no --data", args: []string{"plan-retries", "-o", out("jobs.parquet")}, exit: 2},
		{name: "usage: stray argument", args: append([]string{"capture", "-o", out("obs.parquet"), "extra"}, dht...), exit: 2},
		{name: "usage: two jobs arguments", args: []string{"fetch", "--no-dht", "-o", out("r.parquet"), list, list}, exit: 2},
		{name: "usage: bad --tier", args: []string{"export", "--data", data, "--tier", "warm", "-o", out("x.csv")}, exit: 2},
		{name: "usage: -o in the dataset", args: []string{"plan-retries", "--data", data, "-o", filepath.Join(data, "CURRENT")}, exit: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			command := tt.args[0]
			prefix := "infohash_" + strings.ReplaceAll(command, "-", "_") + "_"
			prom := filepath.Join(dir, "out", command+".prom")
			old := prefix + "exit_status 0\n" + prefix + "last_success_timestamp_seconds " + strconv.Itoa(kept) + "\n"
			if err := os.WriteFile(prom, []byte(old), 0o644); err != nil {
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
			args = append(args, "--metrics-file", prom)
			var stdout, stderr bytes.Buffer
			if code := run(ctx, args, strings.NewReader(""), &stdout, &stderr); code != tt.exit {
				t.Fatalf("exit %d, want %d: %s", code, tt.exit, stderr.String())
			}
			b, err := os.ReadFile(prom)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.written {
				if string(b) != old {
					t.Fatalf("a usage error replaced the metrics file:\n%s", b)
				}
				return
			}
			text := string(b)
			if got := sample(t, text, prefix+"exit_status"); got != float64(tt.exit) {
				t.Errorf("exit_status %v, want %d:\n%s", got, tt.exit, text)
			}
			if last := sample(t, text, prefix+"last_success_timestamp_seconds"); (last == kept) != (tt.exit != 0) {
				t.Errorf("last_success_timestamp_seconds %v after exit %d (the old file had %d):\n%s", last, tt.exit, kept, text)
			}
			if !strings.Contains(text, "\n"+prefix+"run_duration_seconds ") {
				t.Errorf("no run_duration_seconds:\n%s", text)
			}
		})
	}
	// The -o in the dataset was refused before anything touched it.
	if b, err := os.ReadFile(filepath.Join(data, "CURRENT")); err != nil || len(b) == 0 {
		t.Fatalf("CURRENT: %q, %v", b, err)
	}
}

// TestExitStatus: the status --metrics-file records is the one the
// process exits with (run), a plain error under a signal included.
func TestExitStatus(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"ok", context.Background(), nil, 0},
		{"ok under a signal", cancelled, nil, 0},
		{"error", context.Background(), errors.New("dedup: x"), 1},
		{"error under a signal", cancelled, errors.New("dedup: interrupted; nothing committed"), 130},
		{"locked under a signal", cancelled, fmt.Errorf("dedup: %w", exitcode.ErrLocked), 75},
		{"bad input", context.Background(), exitcode.BadInput(errors.New("x")), 2},
		{"usage", context.Background(), usageError(errors.New("x")), 2},
		{"flag parser", context.Background(), errors.New("flag provided but not defined: -bogus"), 2},
		{"partial", context.Background(), exitcode.With(exitcode.Partial, errors.New("x")), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitStatus(tt.ctx, tt.err); got != tt.want {
				t.Errorf("exitStatus = %d, want %d", got, tt.want)
			}
		})
	}
}
