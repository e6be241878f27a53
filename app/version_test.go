package app

import (
	"strings"
	"testing"
)

// TestVersion: --version prints one line naming the Go toolchain, exit 0.
func TestVersion(t *testing.T) {
	stdout, stderr, code := runMain(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "infohash version ") || !strings.Contains(stdout, "go1.") || strings.Count(stdout, "\n") != 1 || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
