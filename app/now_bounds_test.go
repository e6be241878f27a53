package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// TestNowFarFromTheWallClock: a --now more than 10 years from the wall
// clock, either way, is refused by every command that takes one (exit 2,
// one line, nothing created) unless --far-now is given. "plan-retries
// --now 9999-12-31T23:59:59Z" used to commit leases that runs on the wall
// clock counted as live for good.
func TestNowFarFromTheWallClock(t *testing.T) {
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("far-now", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	wall := time.Now().UTC()
	far := map[string]string{
		"year 9999":          "9999-12-31T23:59:59Z",
		"11 years ahead":     wall.AddDate(11, 0, 0).Format(time.RFC3339),
		"11 years back":      wall.AddDate(-11, 0, 0).Format(time.RFC3339),
		"a typo'd century":   wall.AddDate(-100, 0, 0).Format(time.RFC3339),
		"10 years and 1 day": wall.AddDate(10, 0, 1).Format(time.RFC3339),
	}
	for name, now := range far {
		for _, args := range [][]string{
			{"dedup", "--data", "DS", hashes},
			{"plan-retries", "--data", "DS", "-o", filepath.Join(dir, "jobs.parquet")},
			{"merge", "--data", "DS", hashes},
			{"status", "--data", "DS"},
			{"clock"},
		} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "ds")
				args := append(replaceArg(args, "DS", data), "--now", now)
				_, stderr, code := runMain(t, args...)
				at, _ := time.Parse(time.RFC3339, now)
				side := map[bool]string{true: "after", false: "before"}[at.After(wall)]
				want := "infohash: " + args[0] + ": --now: \"" + now + "\" is more than 10 years " + side + " the wall clock ("
				if code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--far-now") {
					t.Fatalf("exit %d, stderr %q; want 2 and one line starting %q, naming --far-now", code, stderr, want)
				}
				if _, err := os.Stat(data); err == nil {
					t.Fatalf("%s was created", data)
				}
			})
		}
	}
	for _, now := range []string{wall.AddDate(9, 11, 0).Format(time.RFC3339), wall.AddDate(-9, -11, 0).Format(time.RFC3339)} {
		if stdout, stderr, code := runMain(t, "clock", "--now", now); code != 0 || stdout != now+"\n" {
			t.Errorf("clock --now %s (within 10 years): exit %d, %q %q", now, code, stdout, stderr)
		}
	}
	// --far-now takes it: a clock that means it.
	if stdout, stderr, code := runMain(t, "clock", "--now", far["year 9999"], "--far-now"); code != 0 || stdout != far["year 9999"]+"\n" {
		t.Errorf("clock --now %s --far-now: exit %d, %q %q", far["year 9999"], code, stdout, stderr)
	}
	data := filepath.Join(dir, "ds")
	if _, stderr, code := runMain(t, "dedup", "--data", data, "--now", far["11 years back"], "--far-now", hashes); code != 0 {
		t.Fatalf("dedup --now %s --far-now: exit %d\n%s", far["11 years back"], code, stderr)
	}
	// The refused plan leased nothing: a plan on the wall clock gets
	// every hash.
	if _, stderr, code := runMain(t, "plan-retries", "--data", data, "--now", far["year 9999"], "-o", filepath.Join(dir, "far.parquet")); code != 2 {
		t.Fatalf("plan-retries --now %s: exit %d\n%s", far["year 9999"], code, stderr)
	}
	if stdout, stderr, code := runMain(t, "plan-retries", "--data", data, "-o", "-"); code != 0 || len(decodeJobs(t, []byte(stdout))) != 3 {
		t.Fatalf("plan-retries on the wall clock: exit %d, want 3 jobs\n%s", code, stderr)
	}
}

// TestNowAheadWarns: dedup, plan-retries and merge commit times reckoned
// from --now, which runs on the wall clock take as they stand: each warns
// once when --now is more than a day ahead of the wall clock, and goes on
// (simulations run days or months ahead). Readers do not warn, nor does a
// --now in the past or less than a day ahead.
func TestNowAheadWarns(t *testing.T) {
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("ahead", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "ds")
	wall := time.Now().UTC()
	for _, tt := range []struct {
		name  string
		ahead time.Duration
		args  []string
		warns bool
	}{
		{"dedup 3 days", 72 * time.Hour, []string{"dedup", "--data", data, hashes}, true},
		{"plan-retries 40 days", 40 * 24 * time.Hour, []string{"plan-retries", "--data", data, "--limit", "0", "-o", filepath.Join(dir, "j1.parquet")}, true},
		{"merge 2 days", 48 * time.Hour, []string{"merge", "--data", data, "-"}, true},
		{"dedup 1 hour", time.Hour, []string{"dedup", "--data", data, hashes}, false},
		{"plan-retries a week back", -7 * 24 * time.Hour, []string{"plan-retries", "--data", data, "--limit", "0", "-o", filepath.Join(dir, "j2.parquet")}, false},
		{"status 3 days", 72 * time.Hour, []string{"status", "--data", data}, false},
		{"clock 3 days", 72 * time.Hour, []string{"clock"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := wall.Add(tt.ahead).Format(time.RFC3339)
			var stdin []byte
			if tt.args[0] == "merge" {
				stdin = resultsArrow(t, nil) // no results: a merge that commits nothing
			}
			_, stderr, code := runMainIn(t, stdin, append(tt.args, "--now", now)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			n := strings.Count(stderr, "ahead of the wall clock")
			if tt.warns && (n != 1 || !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, tt.args[0]+": --now "+now+" is ")) {
				t.Fatalf("want one warning that --now %s is ahead of the wall clock:\n%s", now, stderr)
			}
			if !tt.warns && n != 0 {
				t.Fatalf("warned:\n%s", stderr)
			}
		})
	}
	// The help says what is taken.
	for _, cmd := range []string{"dedup", "plan-retries", "merge", "status", "clock"} {
		if help := helpOf(t, cmd); !strings.Contains(help, "at most 10 years from the wall clock unless --far-now") || !strings.Contains(help, "--far-now") {
			t.Errorf("%s --help does not give --now's bounds:\n%s", cmd, help)
		}
	}
}

// TestRunningNowBounds: capture's and fetch's --now, a clock that runs on
// from TIME, is bounded as every --now and their help says so: more than
// 10 years from the wall clock is refused (exit 2, one line naming
// --far-now, no output) unless --far-now is given. More than a day ahead
// runs without the warning that dedup, plan-retries and merge give, and
// their help says that too, and why: they commit nothing. (Their help
// used to give no bound and say nothing of the warning.)
func TestRunningNowBounds(t *testing.T) {
	jobs := filepath.Join(t.TempDir(), "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{1}}})
	wall := time.Now().UTC()
	stages := map[string][]string{
		"capture": {"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms"},
		"fetch":   {"fetch", "--no-dht", "--timeout", "1s", jobs},
	}
	for _, tt := range []struct {
		name string
		now  time.Time
		far  bool // give --far-now
		code int
	}{
		{"11 years ahead", wall.AddDate(11, 0, 0), false, 2},
		{"11 years back", wall.AddDate(-11, 0, 0), false, 2},
		{"11 years back with --far-now", wall.AddDate(-11, 0, 0), true, 0},
		{"3 days ahead", wall.Add(72 * time.Hour), false, 0},
	} {
		for stage, args := range stages {
			t.Run(tt.name+"/"+stage, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out.parquet")
				args := append(slices.Clone(args), "--now", tt.now.Format(time.RFC3339), "-o", out)
				if tt.far {
					args = append(args, "--far-now")
				}
				_, stderr, code := runMain(t, args...)
				if code != tt.code {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
				}
				if tt.code == 2 {
					if !strings.HasPrefix(stderr, "infohash: "+stage+": --now: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--far-now") {
						t.Errorf("stderr %q; want one line about --now naming --far-now", stderr)
					}
					if _, err := os.Stat(out); err == nil {
						t.Errorf("a refused --now wrote %s", out)
					}
					return
				}
				if strings.Contains(stderr, "ahead of the wall clock") {
					t.Errorf("warned, which --help says it does not:\n%s", stderr)
				}
			})
		}
	}
	for stage := range stages {
		help := helpOf(t, stage)
		for _, want := range []string{"at most 10 years from the wall clock unless --far-now", "no warning when more than 1 day ahead", "--far-now"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not say %q:\n%s", stage, want, help)
			}
		}
	}
}

// replaceArg returns args with every from replaced by to.
func replaceArg(args []string, from, to string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, from, to)
	}
	return out
}
