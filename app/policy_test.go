package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func runMain(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"infohash"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestPolicyCLI(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "policy.json")
	tests := []struct {
		name   string
		before string // policy.json before the run ("": none)
		args   []string
		code   int
		stderr string
		after  string // in policy.json after the run
	}{
		{name: "set repairs an invalid file", before: `{"jitter":5}`,
			args: []string{"policy", "set", "--data", data, "jitter=0.1"}, after: `"jitter": 0.1,`},
		{name: "set repairs two rules at once", before: `{"jitter":5,"plan":{"lease":"0"}}`,
			args: []string{"policy", "set", "--data", data, "jitter=0.1", "plan.lease=1h"}, after: `"lease": "1h",`},
		{name: "set leaves an invalid result unwritten", before: `{"jitter":5,"plan":{"lease":"0"}}`,
			args: []string{"policy", "set", "--data", data, "jitter=0.1"}, code: 2,
			stderr: "plan.lease: must be positive (nothing written)", after: `{"jitter":5,"plan":{"lease":"0"}}`},
		{name: "show names the bad rule and the repair", before: `{"jitter":5}`,
			args: []string{"policy", "show", "--data", data}, code: 2,
			stderr: "jitter: 5 is outside [0, 0.9] (policy set PATH=VALUE can repair it)"},
		{name: "unknown setting lists the settings",
			args: []string{"policy", "set", "--data", data, "nosuch=1"}, code: 2,
			stderr: `policy set: "nosuch": unknown setting (settable: version, seed, jitter, retry_soon, backoff.CLASS,`},
		{name: "object is known but not settable",
			args: []string{"policy", "set", "--data", data, "plan=1"}, code: 2,
			stderr: `"plan": cannot be set from the command line; edit policy.json`},
		{name: "show on a missing directory",
			args: []string{"policy", "show", "--data", filepath.Join(dir, "typo")}, code: 2,
			stderr: "policy show: dataset: " + filepath.Join(dir, "typo") + ": the folder does not exist"},
		{name: "set on a missing directory",
			args: []string{"policy", "set", "--data", filepath.Join(dir, "typo"), "jitter=0.1"}, code: 2,
			stderr: "policy set: dataset: " + filepath.Join(dir, "typo") + ": the folder does not exist (to set a policy before the first dedup, mkdir it first)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(file)
			if tt.before != "" {
				if err := os.WriteFile(file, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, stderr, code := runMain(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d stderr %q, want %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("error is not one line: %q", stderr)
			}
			if tt.after != "" {
				if b, _ := os.ReadFile(file); !strings.Contains(string(b), tt.after) {
					t.Fatalf("policy.json lacks %q:\n%s", tt.after, b)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); err == nil {
		t.Fatal("policy set created the mistyped directory")
	}
}

// TestPolicySetTakesTheWriterLock holds DIR/LOCK as a committing writer
// does: policy set fails with exit 75 and changes nothing.
func TestPolicySetTakesTheWriterLock(t *testing.T) {
	data := t.TempDir()
	f := holdLock(t, data)
	_, stderr, code := runMain(t, "policy", "set", "--data", data, "jitter=0.1")
	if code != 75 || !strings.Contains(stderr, "locked") {
		t.Fatalf("exit %d stderr %q, want 75", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "policy.json")); err == nil {
		t.Fatal("policy.json written while another writer held the lock")
	}
	_, stderr, code = runMain(t, "policy", "set", "--data", data, "--lock-wait", "-1s", "jitter=0.1")
	if code != 2 || !strings.Contains(stderr, "--lock-wait") {
		t.Fatalf("negative --lock-wait: exit %d stderr %q", code, stderr)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, stderr, code := runMain(t, "policy", "set", "--data", data, "--lock-wait", "1s", "jitter=0.1"); code != 0 {
		t.Fatalf("unlocked: exit %d %s", code, stderr)
	}
}

// TestPolicyStrayArgument: a dataset given as a positional argument
// ("policy show DIR") is named, and pointed to --data DIR, as status
// does, not reported as a missing --data; a set without --data whose
// arguments are all PATH=VALUE still asks for --data.
func TestPolicyStrayArgument(t *testing.T) {
	t.Setenv("INFOHASH_DATA", "")
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "show", dir}, `infohash: policy show: unexpected argument "` + dir + `" (the dataset is --data DIR)` + "\n"},
		{[]string{"policy", "show", "--data", dir, "extra"}, `infohash: policy show: unexpected argument "extra" (the dataset is --data DIR)` + "\n"},
		{[]string{"policy", "set", dir, "jitter=0.1"}, `infohash: policy set: unexpected argument "` + dir + `" (the dataset is --data DIR)` + "\n"},
		{[]string{"policy", "set", "jitter=0.1"}, "infohash: policy set: --data DIR (or INFOHASH_DATA) is required\n"},
		{[]string{"policy", "set", "--data", dir, "jitter"}, `infohash: policy set: "jitter" is not PATH=VALUE` + "\n"},
	} {
		stdout, stderr, code := runMain(t, tc.args...)
		if code != 2 || stderr != tc.want || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestPolicyFileWrittenByDedupOnly: of the commands that read the policy,
// only dedup writes DIR/policy.json (the defaults) when it is missing;
// plan-retries and policy show use the defaults without writing it. The
// help of policy and README say so (policy's help said a dataset without
// the file uses the defaults; README that it is written on first use).
func TestPolicyFileWrittenByDedupOnly(t *testing.T) {
	dir, data := seedDataset(t)
	list := filepath.Join(dir, "more.txt")
	if err := os.WriteFile(list, []byte("2222222222222222222222222222222222222222\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		written bool
	}{
		{"policy show", []string{"policy", "show", "--data", data}, false},
		{"plan-retries", []string{"plan-retries", "--data", data, "-o", filepath.Join(dir, "jobs.parquet")}, false},
		{"dedup", []string{"dedup", "--data", data, "--far-now", "--now", "2026-03-02T00:00:00Z", list}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.Remove(filepath.Join(data, "policy.json")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if _, stderr, code := runMain(t, tc.args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			_, err := os.Stat(filepath.Join(data, "policy.json"))
			if written := err == nil; written != tc.written {
				t.Errorf("policy.json written: %v, want %v", written, tc.written)
			}
		})
	}
	help := strings.Join(strings.Fields(helpOf(t, "policy")), " ")
	if want := "dedup writes DIR/policy.json with the documented defaults when the dataset has none; until then plan-retries and merge use (and \"show\" prints) the defaults without writing the file."; !strings.Contains(help, want) {
		t.Errorf("policy --help does not say %q:\n%s", want, help)
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"dedup writes it with the defaults if missing", "retry policy (dedup writes the defaults when it is missing)"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README does not say %q", want)
		}
	}
	if strings.Contains(readme, "on first use") {
		t.Error(`README still says policy.json is written "on first use"`)
	}
}
