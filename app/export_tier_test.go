package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExportTierRepeats: --tier takes several tiers as --status takes
// several statuses (repeated, or comma-separated), keeping a hash in any
// of them, and names a bad one the same way. It used to keep only the
// last --tier given.
func TestExportTierRepeats(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	mustRun(t, []byte(hexLines("tier", 3)), "dedup", "--data", data, "-") // new hashes are hot
	for _, tt := range []struct {
		name string
		args []string
		code int
		rows int
		want string
	}{
		{"hot", []string{"--tier", "hot"}, 0, 3, ""},
		{"cold", []string{"--tier", "cold"}, 0, 0, ""},
		{"hot then cold", []string{"--tier", "hot", "--tier", "cold"}, 0, 3, ""},
		{"comma-separated", []string{"--tier", "cold,hot"}, 0, 3, ""},
		{"bad second", []string{"--tier", "hot", "--tier", "warm"}, 2, 0, `infohash: export: --tier "warm": want hot or cold` + "\n"},
		{"bad in a list", []string{"--tier", "hot,warm"}, 2, 0, `infohash: export: --tier "warm": want hot or cold` + "\n"},
		{"status too", []string{"--status", "new", "--status", "failed"}, 0, 3, ""},
		{"bad status", []string{"--status", "new,old"}, 2, 0, `infohash: export: --status "old": want new, fetched or failed` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"export", "--data", data, "--format", "magnet", "-o", "-"}, tt.args...)
			stdout, stderr, code := runMain(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, stderr)
			}
			if n := strings.Count(stdout, "\n"); n != tt.rows {
				t.Fatalf("%d rows, want %d", n, tt.rows)
			}
			if tt.want != "" && stderr != tt.want {
				t.Fatalf("stderr %q, want %q", stderr, tt.want)
			}
		})
	}
}
