package app

import (
	"os"
	"path/filepath"
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
