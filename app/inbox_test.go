package app

import (
	"os"
	"path/filepath"
	"strings"
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
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, hashes); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	// A spool whose writer was killed mid-line (its lock died with it).
	inbox := filepath.Join(data, "inbox")
	killed := "fedcba9876543210fedcba9876543210fedcba98\n1111111111111111111111111111111111111111\n22222222"
	if err := os.WriteFile(filepath.Join(inbox, ".tmp-part-0a1b.spool-L1"), []byte(killed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, hashes); code != 0 {
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
	stdout, _, _ := runMain(t, "status", "--data", data, now)
	if !strings.Contains(stdout, "partial input") {
		t.Fatalf("status does not list the partial input:\n%s", stdout)
	}
	statusClear := func(when string) {
		t.Helper()
		prom := filepath.Join(dir, "status.prom")
		stdout, stderr, code := runMain(t, "status", "--data", data, now, "--metrics-file", prom)
		if code != 0 || strings.Contains(stdout, "partial input") {
			t.Fatalf("status %s: exit %d:\n%s%s", when, code, stdout, stderr)
		}
		if b, _ := os.ReadFile(prom); !strings.Contains(string(b), "infohash_status_partial_inputs 0\n") {
			t.Fatalf("metrics %s:\n%s", when, b)
		}
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, now, partial); code != 0 {
		t.Fatalf("dedup %s: exit %d: %s", partial, code, stderr)
	}
	statusClear("after applying it")
	stdout, _, _ = runMain(t, "status", "--data", data, now)
	if !strings.Contains(stdout, "hashes        3 ") {
		t.Fatalf("the partial input's two hashes were not applied:\n%s", stdout)
	}

	// The same file again, as a crash right after the commit leaves it.
	if err := os.WriteFile(partial, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runMain(t, "dedup", "--data", data, now, "--log-format", "json", partial)
	if code != 0 || !strings.Contains(stderr, `"already_applied":1`) || !strings.Contains(stderr, `"commits":0`) {
		t.Fatalf("dedup of the applied partial again: exit %d: %s", code, stderr)
	}
	statusClear("after a re-run")
}
