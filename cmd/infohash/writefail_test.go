package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runLimited runs the binary as runBin does, with every file it writes
// capped at blocks blocks (of 512 or 1024 bytes, by shell) by ulimit -f
// (RLIMIT_FSIZE): a write past the cap fails with EFBIG, as one on a full
// disk fails with ENOSPC, without a filesystem to fill. Go ignores the
// SIGXFSZ that comes with it.
func runLimited(t *testing.T, stdin []byte, blocks string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := `ulimit -f "$0" && exec "$@"`
	return runCmd(t, exec.CommandContext(ctx, "sh", append([]string{"-c", script, blocks, bin}, args...)...), stdin)
}

// TestFailedWriteCommitsNothing: when writing fails (a full disk, a file
// size limit), dedup exits 1 with one line naming the file, commits
// nothing and leaves no debris, whichever way its input came; the next
// run without the limit ends where an undisturbed pair of runs ends.
func TestFailedWriteCommitsNothing(t *testing.T) {
	dir := t.TempDir()
	first := writeObs(t, filepath.Join(dir, "first.parquet"), genObs(21, 4000, 1500))
	batch := genObs(22, 300_000, 200_000) // ~600 new rows a partition: files of ~20 KB
	second := writeObs(t, filepath.Join(dir, "second.parquet"), batch)
	secondBytes, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}

	want := filepath.Join(dir, "want")
	for _, in := range []string{first, second} {
		if r := runBin(t, nil, "dedup", "--data", want, "--far-now", "--now", now, in); r.code != 0 {
			t.Fatalf("reference run: exit %d: %s", r.code, r.stderr)
		}
	}

	data := filepath.Join(dir, "data")
	if r := runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, first); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	current := func() string {
		b, err := os.ReadFile(filepath.Join(data, "CURRENT"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before, beforeState := current(), exportState(t, data)

	for _, c := range []struct {
		name  string
		stdin []byte
		input string
	}{
		{"parquet file", nil, second},
		{"parquet on stdin", secondBytes, "-"},
		{"arrow stream on stdin", arrowOf(t, batch), "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runLimited(t, c.stdin, "8", "dedup", "--data", data, "--far-now", "--now", now, c.input)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 1 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "file too large") {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line saying the file is too large", r.code, msg)
			}
			if !strings.Contains(msg, filepath.Join(data, "staging")) && !strings.Contains(msg, filepath.Join(data, "inbox")) {
				t.Errorf("the message does not name the file: %q", msg)
			}
			if got := current(); got != before {
				t.Errorf("CURRENT moved from %q to %q", before, got)
			}
			for _, sub := range []string{"staging", "inbox"} {
				if left, _ := os.ReadDir(filepath.Join(data, sub)); len(left) > 0 {
					t.Errorf("%s/ holds %d entries after the failed run, first %s", sub, len(left), left[0].Name())
				}
			}
			if exportState(t, data) != beforeState {
				t.Error("the committed state changed")
			}
		})
	}

	if r := runBin(t, nil, "dedup", "--data", data, "--far-now", "--now", now, second); r.code != 0 {
		t.Fatalf("run without the limit: exit %d: %s", r.code, r.stderr)
	}
	if exportState(t, data) != exportState(t, want) {
		t.Error("after the failed runs and a good one, the state differs from two undisturbed runs")
	}
}
