package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStatusMetricsFileOutput: status's --metrics-file is written as
// every command's is (README): a new file gets 0666 less the umask, and -
// is refused, since status's report goes to stdout (it wrote a file named
// "-" in the working directory).
func TestStatusMetricsFileOutput(t *testing.T) {
	dir, data := seedDataset(t)
	t.Chdir(dir)
	// README: "- for stdout when the data does not go there"; status
	// prints its report there.
	_, stderr, code := runMain(t, "status", "--data", data, "--metrics-file", "-")
	if code != 2 || !strings.Contains(stderr, "--metrics-file -: status prints its report on stdout") {
		t.Fatalf("status --metrics-file -: exit %d, stderr %q; want 2 and why", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
		t.Fatal("status --metrics-file - wrote a file named -")
	}
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	prom := filepath.Join(dir, "status.prom")
	if _, stderr, code := runMain(t, "status", "--data", data, "--metrics-file", prom); code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(prom); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%s: mode %v, %v; want 0644 under umask 022", prom, fi.Mode(), err)
	}
}

// TestStatusVerifyFailureKeepsLastSuccess: a status --verify that finds a
// damaged file exits 1 and is no success: its metrics file keeps the
// last_success_timestamp_seconds of the file it replaces (it used to drop
// the gauge, and an alert on its absence fired as if status never ran).
// Its report and error word one damaged file in the singular.
func TestStatusVerifyFailureKeepsLastSuccess(t *testing.T) {
	dir, data := seedDataset(t)
	prom := filepath.Join(dir, "status.prom")
	if _, stderr, code := runMain(t, "status", "--data", data, "--metrics-file", prom); code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	gauge := func() string {
		b, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "infohash_status_last_success_timestamp_seconds "); ok {
				return v
			}
		}
		t.Fatalf("%s has no last_success_timestamp_seconds:\n%s", prom, b)
		return ""
	}
	before := gauge()
	var damaged string
	filepath.WalkDir(filepath.Join(data, "state"), func(p string, d os.DirEntry, err error) error {
		if err == nil && damaged == "" && strings.HasSuffix(p, ".parquet") {
			damaged = p
		}
		return nil
	})
	if damaged == "" {
		t.Fatal("no state file to damage")
	}
	f, err := os.OpenFile(damaged, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	stdout, stderr, code := runMain(t, "status", "--data", data, "--verify", "--metrics-file", prom)
	if code != 1 {
		t.Fatalf("status --verify on a damaged file: exit %d, want 1: %s", code, stderr)
	}
	// One damaged file takes the singular, in the report and in the error:
	// they said "1 do not match" and "1 of 9 files do not match".
	if !strings.Contains(stdout, " against the manifest: 1 does not match (") {
		t.Errorf("status --verify with one damaged file: stdout lacks \"1 does not match\":\n%s", stdout)
	}
	if !regexp.MustCompile(`: 1 of \d+ files does not match the manifest of snapshot \d+`).MatchString(stderr) {
		t.Errorf("status --verify with one damaged file: stderr %q, want \"1 of N files does not match\"", stderr)
	}
	if after := gauge(); after != before {
		t.Errorf("last_success_timestamp_seconds moved from %s to %s on a failed --verify", before, after)
	}
}
