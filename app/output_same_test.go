package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestReportPathSharedWithOutput: a report named like the command's data
// file, an input or the other report, however spelt, is a usage error
// before any work; it used to replace the file written before it
// (plan-retries' jobs file after its leases were committed, dedup's input
// after it was applied). Devices (a null device: fsutiltest.NullDevice,
// never /dev/null itself) may be shared: they are written in place.
func TestReportPathSharedWithOutput(t *testing.T) {
	dir, data := seedDataset(t)
	t.Chdir(dir)
	hashes := filepath.Join(dir, "h.txt")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"jobs and stats", []string{"plan-retries", "--data", data, "-o", "jobs.parquet", "--stats-json", "./jobs.parquet"},
			"--stats-json: ./jobs.parquet is also the output (-o)"},
		{"jobs and metrics", []string{"plan-retries", "--data", data, "-o", filepath.Join(dir, "jobs.parquet"), "--metrics-file", "jobs.parquet"},
			"--metrics-file: jobs.parquet is also the output (-o)"},
		{"stats and metrics", []string{"dedup", "--data", data, "--stats-json", "r.txt", "--metrics-file", "sub/../r.txt", hashes},
			"is also --"},
		{"stats and an input", []string{"dedup", "--data", data, "--stats-json", "h.txt", hashes},
			"--stats-json: h.txt is also an input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	if b, err := os.ReadFile(hashes); err != nil || !strings.HasPrefix(string(b), "0123") {
		t.Fatalf("the input was replaced: %q, %v", b, err)
	}
	stdout, stderr, code := runMain(t, "status", "--data", data)
	if code != 0 || !strings.Contains(stdout, "(snapshot 1 by dedup") {
		t.Fatalf("status after the refused runs: exit %d\n%s%s", code, stdout, stderr)
	}
	null := fsutiltest.NullDevice(t)
	if _, stderr, code := runMain(t, "dedup", "--data", data, "--stats-json", null, "--metrics-file", null, hashes); code != 0 {
		t.Fatalf("both reports to %s: exit %d: %s", null, code, stderr)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Fatalf("%s is no longer a device: %v", null, err)
	}
}
