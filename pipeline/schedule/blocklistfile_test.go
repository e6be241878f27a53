package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadBlocklistNotAFile: DIR/blocklist that is no regular file is an
// error naming it, as plan-retries (exit 2), status (unreadable: no waves,
// exit 1) and export take it. A symbolic link to nothing (a shared list
// moved away) read as no blocklist: its hashes were planned and exported
// unsaid. A FIFO blocked the read for good (SIGTERM did not end status),
// a directory failed on read. A link to a regular file is read, and no
// file at all is an empty list.
func TestLoadBlocklistNotAFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string // in the error; "": none
		n    int    // hashes listed when no error
	}{
		{"none", func(t *testing.T, path string) {}, "", 0},
		{"a link to a list", func(t *testing.T, path string) {
			list := filepath.Join(t.TempDir(), "list")
			if err := os.WriteFile(list, []byte(hexA+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(list, path); err != nil {
				t.Fatal(err)
			}
		}, "", 1},
		{"a link to nothing", func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "moved"), path); err != nil {
				t.Fatal(err)
			}
		}, "blocklist: " + "DIR/blocklist is a symbolic link to ", 0},
		{"a FIFO", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip("no FIFO here:", err)
			}
		}, "blocklist: DIR/blocklist", 0},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "blocklist: DIR/blocklist", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.make(t, filepath.Join(dir, BlocklistName))
			b, err := LoadBlocklist(dir)
			msg := ""
			if err != nil {
				msg = strings.ReplaceAll(err.Error(), dir, "DIR")
			}
			switch {
			case tt.want == "" && (err != nil || b.Len() != tt.n):
				t.Fatalf("%d hashes, error %v; want %d, none", b.Len(), err, tt.n)
			case tt.want != "" && !strings.Contains(msg, tt.want):
				t.Fatalf("error %q, want one with %q", msg, tt.want)
			case strings.Contains(msg, "\n"):
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}
