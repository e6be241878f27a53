package app

import (
	"os"
	"strings"
	"testing"
)

// TestEmptyOutputRefusedBeforeWork: -o "" (a script's "-o $OUT" with OUT
// unset) is a usage error before any work. plan-retries committed the
// jobs' leases and only then failed to rename its jobs file to "" (exit
// 1, the hashes leased for nothing).
func TestEmptyOutputRefusedBeforeWork(t *testing.T) {
	dir, data := seedDataset(t)
	t.Chdir(dir)
	for _, args := range [][]string{
		{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "-o", ""},
		{"export", "--data", data, "--table", "state", "--format", "csv", "-o", ""},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, stderr, code := runMain(t, args...)
			if code != 2 || !strings.Contains(stderr, "-o: empty file name") {
				t.Fatalf("exit %d, stderr %q; want 2 and -o named", code, stderr)
			}
		})
	}
	stdout, stderr, code := runMain(t, "status", "--data", data)
	if code != 0 || !strings.Contains(stdout, "(snapshot 1 by dedup") || !strings.Contains(stdout, "(0 leased") {
		t.Fatalf("status after the refused runs: exit %d\n%s%s", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("the working directory holds %d entries, want ds and h.txt only", len(ents))
	}
}
