package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHolderOf: the holder a "locked" error and the lock-wait log lines
// name is one short line, whatever the LOCK file holds (lines, escapes,
// megabytes); what infohash writes in it reads as it is.
func TestHolderOf(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"ours", "host=h pid=1 since=2026-01-02T03:04:05Z\n", "host=h pid=1 since=2026-01-02T03:04:05Z"},
		{"empty", "", "another process"},
		{"two lines", "host=h\npid=1\n", `"host=h\npid=1"`},
		{"an escape", "\x1b]0;x\x07", `"\x1b]0;x\a"`},
		{"huge", strings.Repeat("h", 4<<20), strings.Repeat("h", 200) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "LOCK")
			if err := os.WriteFile(p, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := holderOf(p); got != tt.want {
				t.Fatalf("holderOf = %.80q, want %q", got, tt.want)
			}
		})
	}
}
