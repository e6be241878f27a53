package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// exitCase is a stage's run that ends one way. TestMetricsOnEveryExit
// and TestStatsJSONOnEveryExit run every case, each with its own report
// flag added, and check the file it leaves.
type exitCase struct {
	name      string
	args      []string                  // the command, then its arguments; the report flag is added
	hold      func(t *testing.T) func() // a lock held through the run
	cancelled bool                      // run under a context already cancelled, as after SIGINT
	exit      int
	usage     bool   // a usage error: the report's old file is left as it was
	stats     string // a key of the --stats-json written, beside exit_status: "exit_status" (alone) when the run wrote no counters
}

// exitFixture is what the exit cases run on: a dataset (data), another
// to merge from, hash lists, a dataset that fails before its commit, and
// out (the folder of outputs and reports).
type exitFixture struct {
	dir, data, fresh string
	out              func(name string) string
	lockData         func(t *testing.T) func() // holds data's writer lock
	cases            []exitCase
}

// newExitFixture makes the datasets and files of the exit cases, and the
// cases.
func newExitFixture(t *testing.T) *exitFixture {
	t.Helper()
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
	// flock holds the lock of the file at p.
	flock := func(t *testing.T, p string, flag int) func() {
		t.Helper()
		f, err := os.OpenFile(p, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		return func() { f.Close() }
	}
	lockData := func(t *testing.T) func() { return flock(t, filepath.Join(data, "LOCK"), os.O_RDWR) }
	// lockFile holds the lock of a file a stream is still written into.
	lockFile := func(p string) func(t *testing.T) func() {
		return func(t *testing.T) func() { return flock(t, p, os.O_RDONLY) }
	}
	// lockState holds a --dht-state's lock.
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
	const none = "exit_status"
	cases := []exitCase{
		{name: "dedup ok", args: []string{"dedup", "--data", data, list}, exit: 0, stats: "inputs"},
		{name: "dedup locked", args: []string{"dedup", "--data", data, fresh}, hold: lockData, exit: 75, stats: none},
		{name: "dedup bad input", args: []string{"dedup", "--data", data, bad}, exit: 2, stats: none},
		{name: "dedup error", args: []string{"dedup", "--data", broken, fresh}, exit: 1, stats: none},
		{name: "dedup partial", args: []string{"dedup", "--data", data, fresh}, hold: lockFile(fresh), exit: 3, stats: "inputs"},
		{name: "dedup interrupted", args: []string{"dedup", "--data", data, fresh}, cancelled: true, exit: 130, stats: none},
		{name: "merge locked", args: []string{"merge", "--data", data, "--from", other}, hold: lockData, exit: 75, stats: none},
		{name: "merge interrupted", args: []string{"merge", "--data", data, "--from", other}, cancelled: true, exit: 130, stats: none},
		{name: "merge bad input", args: []string{"merge", "--data", data, bad}, exit: 2, stats: none},
		{name: "merge ok", args: []string{"merge", "--data", data, "--from", other}, exit: 0, stats: "inputs"}, // last: a second merge of other does nothing
		{name: "plan-retries locked", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, hold: lockData, exit: 75, stats: none},
		{name: "plan-retries error", args: []string{"plan-retries", "--data", broken, "-o", out("jobs.parquet")}, exit: 1, stats: none},
		{name: "plan-retries interrupted", args: []string{"plan-retries", "--data", data, "-o", out("jobs.parquet")}, cancelled: true, exit: 130, stats: none},
		{name: "plan-retries ok", args: []string{"plan-retries", "--data", data, "-o", out("jobs0.parquet")}, exit: 0, stats: "planned"}, // last: it leases every job
		{name: "capture locked", args: append([]string{"capture", "--duration", "1s", "-o", out("obs1.parquet")}, dht...),
			hold: lockState("lock"), exit: 75, stats: none},
		{name: "capture interrupted", args: append([]string{"capture", "--duration", "1m", "-o", out("obs2.parquet")}, dht...),
			cancelled: true, exit: 130, stats: "nodes"}, // what was received is written
		{name: "fetch ok", args: []string{"fetch", "--no-dht", "-o", out("r0.parquet"), list}, exit: 0, stats: "jobs"}, // local_error: no peer source
		{name: "fetch interrupted", args: append([]string{"fetch", "-o", out("r1.parquet"), list}, dht...), cancelled: true, exit: 130, stats: "jobs"},
		{name: "fetch locked", args: append([]string{"fetch", "-o", out("r2.parquet"), list}, dht...),
			hold: lockState("fetch.lock"), exit: 75, stats: none},
		{name: "fetch bad input", args: []string{"fetch", "--no-dht", "-o", out("r3.parquet"), bad}, exit: 2, stats: none},
		{name: "export ok", args: []string{"export", "--data", data, "-o", out("x0.csv")}, exit: 0, stats: "rows"},
		{name: "export bad input", args: []string{"export", "--data", empty, "-o", out("x.csv")}, exit: 2, stats: none},
		{name: "export interrupted", args: []string{"export", "--data", data, "-o", out("x.csv")}, cancelled: true, exit: 130, stats: none},

		{name: "usage: unknown flag", args: []string{"dedup", "--data", data, "--bogus", list}, exit: 2, usage: true},
		{name: "usage: bad --now", args: []string{"merge", "--data", data, "--now", "yesterday", list}, exit: 2, usage: true},
		{name: "usage: no --data", args: []string{"plan-retries", "-o", out("jobs.parquet")}, exit: 2, usage: true},
		{name: "usage: stray argument", args: append([]string{"capture", "-o", out("obs.parquet"), "extra"}, dht...), exit: 2, usage: true},
		{name: "usage: two jobs arguments", args: []string{"fetch", "--no-dht", "-o", out("r.parquet"), list, list}, exit: 2, usage: true},
		{name: "usage: bad --tier", args: []string{"export", "--data", data, "--tier", "warm", "-o", out("x.csv")}, exit: 2, usage: true},
		{name: "usage: -o in the dataset", args: []string{"plan-retries", "--data", data, "-o", filepath.Join(data, "CURRENT")}, exit: 2, usage: true},
	}
	return &exitFixture{dir: dir, data: data, fresh: fresh, out: out, lockData: lockData, cases: cases}
}

// run runs every case with --flag out/COMMAND.ext added, the file holding
// old(COMMAND) before. After a usage error it must hold old still; after
// any other exit, check checks what it holds.
func (fx *exitFixture) run(t *testing.T, flag, ext string, old func(command string) string, check func(t *testing.T, tt exitCase, b []byte)) {
	t.Helper()
	for _, tt := range fx.cases {
		t.Run(tt.name, func(t *testing.T) {
			report := fx.out(tt.args[0] + ext)
			before := old(tt.args[0])
			if err := os.WriteFile(report, []byte(before), 0o644); err != nil {
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
			args = append(args, flag, report)
			var stdout, stderr bytes.Buffer
			if code := run(ctx, args, strings.NewReader(""), &stdout, &stderr); code != tt.exit {
				t.Fatalf("exit %d, want %d: %s", code, tt.exit, stderr.String())
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			if tt.usage {
				if string(b) != before {
					t.Fatalf("a usage error replaced %s:\n%s", flag, b)
				}
				return
			}
			check(t, tt, b)
		})
	}
	// The -o in the dataset was refused before anything touched it.
	if b, err := os.ReadFile(filepath.Join(fx.data, "CURRENT")); err != nil || len(b) == 0 {
		t.Fatalf("CURRENT: %q, %v", b, err)
	}
}

// metricsPrefix is the prefix of command's metrics.
func metricsPrefix(command string) string {
	return "infohash_" + strings.ReplaceAll(command, "-", "_") + "_"
}

// TestMetricsOnEveryExit: every stage writes --metrics-file on every exit
// it can end with but a usage error (and 141): exit_status says how it
// ended, and a run that did not exit 0 keeps the last success time of the
// file it replaces. A run locked out (75), given bad input (2), failing
// before its commit (1) or interrupted before it started (130) used to
// leave the old file, exit_status 0, in place.
func TestMetricsOnEveryExit(t *testing.T) {
	const kept = 1600000000
	old := func(command string) string {
		prefix := metricsPrefix(command)
		return prefix + "exit_status 0\n" + prefix + "last_success_timestamp_seconds " + strconv.Itoa(kept) + "\n"
	}
	newExitFixture(t).run(t, "--metrics-file", ".prom", old, func(t *testing.T, tt exitCase, b []byte) {
		prefix, text := metricsPrefix(tt.args[0]), string(b)
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

// TestStatsJSONOnEveryExit: every stage writes --stats-json on every exit
// it writes --metrics-file on (all but a usage error): its counters and
// exit_status when it got to write them, else {"exit_status": N} alone.
// A run locked out (75), given bad input (2), failing before its commit
// (1) or interrupted before it started (130) used to leave the old file
// in place, which read as the last run's counters; a run that wrote its
// counters (dedup partial 3, capture or fetch interrupted 130) wrote no
// exit_status, which read as a success.
func TestStatsJSONOnEveryExit(t *testing.T) {
	fx := newExitFixture(t)
	old := func(string) string { return `{"old": true}` + "\n" }
	fx.run(t, "--stats-json", ".json", old, func(t *testing.T, tt exitCase, b []byte) {
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("--stats-json is not JSON: %v\n%s", err, b)
		}
		if _, ok := got[tt.stats]; !ok {
			t.Fatalf("--stats-json has no %q:\n%s", tt.stats, b)
		}
		if got["exit_status"] != float64(tt.exit) {
			t.Errorf("--stats-json exit_status %v, want %d:\n%s", got["exit_status"], tt.exit, b)
		}
		if tt.stats == "exit_status" && len(got) != 1 {
			t.Errorf("--stats-json %s, want {\"exit_status\": %d} alone", b, tt.exit)
		}
	})
	// With --metrics-file too, both are written, with the same status.
	t.Run("dedup locked, both reports", func(t *testing.T) {
		defer fx.lockData(t)()
		stats, prom := fx.out("both.json"), fx.out("both.prom")
		var stdout, stderr bytes.Buffer
		args := []string{"infohash", "dedup", "--data", fx.data, fx.fresh, "--stats-json", stats, "--metrics-file", prom}
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

// TestReportsOnEveryExit runs the wrappers wire installs on a stage whose
// Action stands for a run that ends one way: which reports they write
// after it, with which status, and how the run then ends. --stats-json
// is written first: when it fails (/dev/full) after a run that exited 0,
// the metrics record the 1 that failure makes, not the 0 before it; after
// a run that failed, the run's status stays, its error joined with the
// report's. A report the run itself tried is left to it, and the other
// still written.
func TestReportsOnEveryExit(t *testing.T) {
	const old = "old\n"
	locked := fmt.Errorf("dedup: %w", exitcode.ErrLocked)
	ok := func(*cli.Context) error { return nil }
	for _, tt := range []struct {
		name      string
		command   string
		action    func(cc *cli.Context) error
		statsFull bool   // --stats-json /dev/full
		exit      int    // how the run ends
		errWants  string // in its error ("": none)
		stats     bool   // --stats-json written: {"exit_status": exit} (false: old kept)
		metrics   bool   // --metrics-file written, with exit_status exit (false: old kept)
	}{
		{name: "ok", command: "dedup", action: ok, exit: 0, stats: true, metrics: true},
		{name: "locked", command: "dedup", action: func(*cli.Context) error { return locked }, exit: 75, errWants: "dedup: ", stats: true, metrics: true},
		{name: "ok, --stats-json fails", command: "dedup", action: ok, statsFull: true, exit: 1, errWants: "--stats-json: ", metrics: true},
		{name: "locked, --stats-json fails", command: "dedup", action: func(*cli.Context) error { return locked }, statsFull: true,
			exit: 75, errWants: "; and --stats-json: ", metrics: true},
		{name: "run tried both", command: "dedup", action: func(cc *cli.Context) error {
			noteReportTried(cc.Context, "stats-json")
			noteReportTried(cc.Context, "metrics-file")
			return nil
		}, exit: 0},
		{name: "run tried --stats-json", command: "dedup", action: func(cc *cli.Context) error {
			noteReportTried(cc.Context, "stats-json")
			return nil
		}, exit: 0, metrics: true},
		{name: "run tried --metrics-file", command: "dedup", action: func(cc *cli.Context) error {
			noteReportTried(cc.Context, "metrics-file")
			return locked
		}, exit: 75, errWants: "dedup: ", stats: true},
		{name: "usage error", command: "dedup", action: func(*cli.Context) error { return usageError(errors.New("dedup: -o: bad")) },
			exit: 2, errWants: "-o: bad"},
		{name: "141, reported", command: "dedup", action: func(*cli.Context) error {
			return exitcode.With(exitcode.BrokenPipe, errors.New("stdout: broken pipe"))
		}, exit: 141, errWants: "broken pipe", stats: true, metrics: true},
		{name: "141, quiet", command: "export", action: func(*cli.Context) error {
			return exitcode.With(exitcode.BrokenPipe, errors.New("stdout: broken pipe"))
		}, exit: 141, errWants: "broken pipe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			stats, prom := filepath.Join(dir, "stats.json"), filepath.Join(dir, "run.prom")
			for _, p := range []string{stats, prom} {
				if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			statsArg := stats
			if tt.statsFull {
				statsArg = "/dev/full"
			}
			c := &cli.Command{Name: tt.command, Action: tt.action,
				Flags: []cli.Flag{&cli.StringFlag{Name: "stats-json"}, &cli.StringFlag{Name: "metrics-file"}}}
			reportsOnEveryExit(c)
			var stdout, stderr bytes.Buffer
			a := &cli.App{Name: "infohash", Commands: []*cli.Command{c}, Writer: &stdout, ErrWriter: &stderr,
				ExitErrHandler: func(*cli.Context, error) {}}
			ctx := context.Background()
			err := a.RunContext(ctx, []string{"infohash", tt.command, "--stats-json", statsArg, "--metrics-file", prom})
			if got := exitStatus(ctx, err); got != tt.exit {
				t.Fatalf("exit %d, want %d: %v", got, tt.exit, err)
			}
			if (err != nil) != (tt.errWants != "") || err != nil && !strings.Contains(err.Error(), tt.errWants) {
				t.Fatalf("error %v, want one holding %q", err, tt.errWants)
			}
			b, err := os.ReadFile(stats)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("{\n  \"exit_status\": %d\n}\n", tt.exit); tt.stats && string(b) != want {
				t.Errorf("--stats-json %q, want %q", b, want)
			} else if !tt.stats && string(b) != old {
				t.Errorf("--stats-json written: %q", b)
			}
			p, err := os.ReadFile(prom)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !tt.metrics && string(p) != old:
				t.Errorf("--metrics-file written:\n%s", p)
			case tt.metrics:
				if got := sample(t, string(p), metricsPrefix(tt.command)+"exit_status"); got != float64(tt.exit) {
					t.Errorf("metrics exit_status %v, want %d:\n%s", got, tt.exit, p)
				}
			}
		})
	}
}

// TestStatsJSONHelpLocks: the --stats-json help of a stage says that a
// run locked out writes exit_status alone only for a stage that takes a
// lock (its "locked" case in newExitFixture exits 75); export takes none,
// and its help used to say it could be locked out.
func TestStatsJSONHelpLocks(t *testing.T) {
	locks := map[string]bool{"capture": true, "dedup": true, "plan-retries": true, "fetch": true, "merge": true, "export": false}
	seen := 0
	for _, c := range commands() {
		i := slices.IndexFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "stats-json") })
		if i < 0 {
			continue
		}
		seen++
		t.Run(c.Name, func(t *testing.T) {
			want, ok := locks[c.Name]
			if !ok {
				t.Fatalf("%s takes --stats-json: say whether it locks", c.Name)
			}
			usage := c.Flags[i].(*cli.StringFlag).Usage
			if got := strings.Contains(usage, "locked out"); got != want {
				t.Errorf("help says locked out: %v, want %v: %q", got, want, usage)
			}
			if !strings.Contains(usage, "exit_status") {
				t.Errorf("help does not name exit_status: %q", usage)
			}
		})
	}
	if seen != len(locks) {
		t.Errorf("%d commands take --stats-json, want %d", seen, len(locks))
	}
}
