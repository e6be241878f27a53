package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeepLoweredWarns: a writer whose --keep (its default 3, a run by
// hand) is below what the writers before it kept (crawl-pass's KEEP)
// removes that history at its commit, which readers of status's frozen
// line lose: it says so in one WARN line, naming the snapshots and
// --keep. It removed them without a word. Writers of a steady --keep, or
// one lowered by a snapshot or two, say nothing.
func TestKeepLoweredWarns(t *testing.T) {
	const warn = "older snapshots"
	for _, tt := range []struct {
		name   string
		before string // the --keep of the 6 commits before
		last   []string
		want   string // in the last run's stderr; "" no warning
	}{
		{"steady default", "3", nil, ""},
		{"lowered by one", "4", []string{"--keep", "3"}, ""},
		{"lowered to the default", "10", nil, "removed 5 older snapshots (000000000000 to 000000000004), keeping the last 3 (--keep)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			run := func(i int, keep []string) string {
				t.Helper()
				args := append([]string{"dedup", "--data", data}, keep...)
				_, stderr, code := runMainIn(t, fmt.Appendf(nil, "%040x\n", i), append(args, "-")...)
				if code != 0 {
					t.Fatalf("dedup %d: exit %d: %s", i, code, stderr)
				}
				return stderr
			}
			for i := range 6 {
				if stderr := run(i, []string{"--keep", tt.before}); strings.Contains(stderr, warn) {
					t.Fatalf("dedup %d under a steady --keep %s warns: %s", i, tt.before, stderr)
				}
			}
			stderr := run(6, tt.last)
			if got := strings.Contains(stderr, warn); got != (tt.want != "") || tt.want != "" && !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q; want a warning %q: %v", stderr, tt.want, tt.want != "")
			}
		})
	}
}
