package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/schema"
)

// TestOutputDirCannotTakeAFile: an -o FILE (or a report) in a folder that
// cannot take a new file (sysfs, where root passes access(2)) is a usage
// error before any work: exit 2, one line naming the path as given, with
// the cause. It was exit 1 after the work, naming a temporary file
// ("open /sys/.tmp-x.csv-…: permission denied"), plan-retries' leases
// committed.
func TestOutputDirCannotTakeAFile(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys", &st); err != nil || st.Type != unix.SYSFS_MAGIC {
		t.Skip("no sysfs at /sys")
	}
	dir, data := seedDataset(t)
	jobs := filepath.Join(dir, "jobs.parquet")
	writeJobs(t, jobs, []schema.Job{{InfoHash: schema.Hash{0x5e, 3}, HashType: schema.HashV1}})
	const out = "/sys/x.parquet"
	for _, tt := range []struct {
		name string
		args []string
		flag string // what names out in the error
	}{
		{"capture", []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--passive", "--duration", "1s", "-o", out}, "-o"},
		{"fetch", []string{"fetch", jobs, "--no-dht", "-o", out}, "-o"},
		{"plan-retries", []string{"plan-retries", "--data", data, "-o", out}, "-o"},
		{"export", []string{"export", "--data", data, "-o", out}, "-o"},
		{"export --stats-json", []string{"export", "--data", data, "-f", "csv", "--stats-json", out}, "--stats-json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadFile(filepath.Join(data, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runMain(t, tt.args...)
			want := tt.flag + ": " + out + ": directory /sys cannot take a new file: "
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, ".tmp-") {
				t.Fatalf("exit %d, want 2 and one line saying %q...:\n%s", code, want, stderr)
			}
			if after, err := os.ReadFile(filepath.Join(data, "CURRENT")); err != nil || string(after) != string(before) {
				t.Errorf("the refused run committed (CURRENT %q, was %q)", after, before)
			}
		})
	}
}
