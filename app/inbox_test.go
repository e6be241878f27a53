package app

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestAppliedPartialInputLeavesStatus walks README's workflow for what a
// run killed while spooling stdin had read: the next run sets it aside as
// DIR/inbox/partial-*, status lists it, the user applies it as an INPUT,
// and from then on status no longer calls it "not applied". Applying the
// same bytes again (a copy left by a crash between the commit and the
// removal) is a no-op that clears it too.
func TestAppliedPartialInputLeavesStatus(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := "--now=2026-03-01T00:00:00Z"
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, "--far-now", hashes); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	// A spool whose writer was killed mid-line (its lock died with it).
	inbox := filepath.Join(data, "inbox")
	killed := "fedcba9876543210fedcba9876543210fedcba98\n1111111111111111111111111111111111111111\n22222222"
	if err := os.WriteFile(filepath.Join(inbox, ".tmp-part-0a1b.spool-L1"), []byte(killed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, "--far-now", hashes); code != 0 {
		t.Fatalf("dedup after the kill: exit %d: %s", code, stderr)
	}
	partials, _ := filepath.Glob(filepath.Join(inbox, "partial-*"))
	if len(partials) != 1 {
		t.Fatalf("set aside %v, want one partial input", partials)
	}
	partial := partials[0]
	kept, err := os.ReadFile(partial)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, _ := runMain(t, "status", "--data", data, now, "--far-now")
	if !strings.Contains(stdout, "partial input") {
		t.Fatalf("status does not list the partial input:\n%s", stdout)
	}
	statusClear := func(when string) {
		t.Helper()
		prom := filepath.Join(dir, "status.prom")
		stdout, stderr, code := runMain(t, "status", "--data", data, now, "--far-now", "--metrics-file", prom)
		if code != 0 || strings.Contains(stdout, "partial input") {
			t.Fatalf("status %s: exit %d:\n%s%s", when, code, stdout, stderr)
		}
		if b, _ := os.ReadFile(prom); !strings.Contains(string(b), "infohash_status_partial_inputs 0\n") {
			t.Fatalf("metrics %s:\n%s", when, b)
		}
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, "--far-now", partial); code != 0 {
		t.Fatalf("dedup %s: exit %d: %s", partial, code, stderr)
	}
	statusClear("after applying it")
	stdout, _, _ = runMain(t, "status", "--data", data, now, "--far-now")
	if !hashesLine(3).MatchString(stdout) {
		t.Fatalf("the partial input's two hashes were not applied:\n%s", stdout)
	}

	// The same file again, as a crash right after the commit leaves it.
	if err := os.WriteFile(partial, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, "dedup", "--data", data, now, "--far-now", "--log-format", "json", partial)
	if code != 0 || !strings.Contains(stderr, `"already_applied":1`) || !strings.Contains(stderr, `"commits":0`) {
		t.Fatalf("dedup of the applied partial again: exit %d: %s", code, stderr)
	}
	statusClear("after a re-run")
}

// TestBareDedupAppliesLeftovers: what stdin sent to a dedup locked out
// (exit 75, "the next dedup applies it") is applied by a bare
// "dedup --data DIR", as merge does with its own; with nothing left, a
// bare dedup is "no input" (exit 2), and makes no dataset.
func TestBareDedupAppliesLeftovers(t *testing.T) {
	_, data := seedDataset(t)
	lock := holdLock(t, data)
	list := []byte("1111111111111111111111111111111111111111\n2222222222222222222222222222222222222222\n")
	_, stderr, code := runMainIn(t, list, "dedup", "--data", data, "-")
	if code != 75 || !strings.Contains(stderr, "the next dedup applies it") {
		t.Fatalf("locked out: exit %d, stderr %q; want 75 saying the next dedup applies it", code, stderr)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	tests := []struct {
		name, data string
		code       int
		want       string // in stderr
	}{
		{"applies the leftover", data, 0, `"inputs":1`},
		{"then nothing to do", data, 2, "infohash: dedup: no input: "},
		{"no dataset", missing, 2, "infohash: dedup: no input: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, "dedup", "--data", tt.data, "--log-format", "json")
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
			if code == 2 && strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stderr %q: want one line", stderr)
			}
		})
	}
	if stdout, _, _ := runMain(t, "status", "--data", data); !hashesLine(4).MatchString(stdout) {
		t.Fatalf("the two hashes stdin sent were not applied:\n%s", stdout)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a bare dedup made %s: %v", missing, err)
	}
}

// hashesLine matches status's line of n hashes, however its labels are
// aligned (the longest, "table torrents", sets the width).
func hashesLine(n int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^hashes +%d `, n))
}
