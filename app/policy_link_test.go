package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyDanglingLink: a DIR/policy.json that links to nothing (the
// shared file moved away) stops policy show and plan-retries (exit 2,
// one line naming the link); they ran on the default policy, unsaid.
func TestPolicyDanglingLink(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, stderr, code := runMainIn(t, []byte(committedHash+"\n"), "dedup", "--data", data, "--now", "2026-03-01T00:00:00Z", "-"); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	file := filepath.Join(data, "policy.json")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "moved.json"), file); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"policy show", []string{"policy", "show", "--data", data}},
		{"plan-retries dry run", []string{"plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "--limit", "0"}},
		{"plan-retries", []string{"plan-retries", "--data", data, "--now", "2026-03-01T00:01:00Z", "-o", filepath.Join(dir, "jobs.parquet")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			want := file + ` is a symbolic link to "` + filepath.Join(dir, "moved.json") + `", which does not exist`
			if code != 2 || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
		})
	}
}
