package app

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestNamedOutputsKept: every file a stage writes at a path the user
// names (-o, --stats-json, --metrics-file) keeps what is there: a device
// or FIFO is written in place, a symbolic link's target is replaced and
// the link kept, a directory (or, where the permission bits bind, a file
// in a read-only folder) is refused with nothing left. A writer that
// renamed a temporary file onto its output replaced /dev/null when a
// test named it as root.
func TestNamedOutputsKept(t *testing.T) {
	dir, data := seedDataset(t)
	hashes := filepath.Join(dir, "h.txt")
	for _, w := range []struct {
		name string
		args func(out string) []string
		head string // what the output starts with
	}{
		{"export -o csv", func(out string) []string {
			return []string{"export", "--data", data, "--table", "state", "--format", "csv", "--replace", "-o", out}
		}, "info_hash,"},
		{"export -o parquet", func(out string) []string {
			return []string{"export", "--data", data, "--table", "state", "--format", "parquet", "--replace", "-o", out}
		}, "PAR1"},
		{"plan-retries -o", func(out string) []string {
			return []string{"plan-retries", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--replace", "-o", out}
		}, "PAR1"},
		{"dedup --stats-json", func(out string) []string {
			return []string{"dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--stats-json", out, hashes}
		}, "{"},
		{"dedup --metrics-file", func(out string) []string {
			return []string{"dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", "--metrics-file", out, hashes}
		}, "# HELP"},
	} {
		t.Run(w.name, func(t *testing.T) {
			for _, o := range fsutiltest.Outputs(t, "out") {
				t.Run(o.Name, func(t *testing.T) {
					_, stderr, code := runMain(t, w.args(o.Path)...)
					if (code != 0) != o.Fails {
						t.Fatalf("exit %d, want a failure: %v\n%s", code, o.Fails, stderr)
					}
					o.Check(t)
					if b := o.Content(t); b != nil && (len(b) < 20 || !bytes.HasPrefix(b, []byte(w.head))) {
						t.Fatalf("wrote %.40q", b)
					}
				})
			}
		})
	}
}
