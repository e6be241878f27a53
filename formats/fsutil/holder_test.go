package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// holderTests are lock files' contents and what an error or a log line
// shows of them: one line of text, a bounded one, whatever the file holds.
var holderTests = []struct{ name, file, want string }{
	{"ours", "pid 42\n", "pid 42"},
	{"the dataset's", "host=h pid=1 since=2026-01-02T03:04:05Z\n", "host=h pid=1 since=2026-01-02T03:04:05Z"},
	{"empty", "", ""},
	{"blanks", " \n\n", ""},
	{"two lines", "pid 1\nrm -rf /\n", `"pid 1\nrm -rf /"`},
	{"a terminal escape", "pid \x1b[2J1", `"pid \x1b[2J1"`},
	{"not UTF-8", "pid \xff", `"pid \xff"`},
	{"long", strings.Repeat("p", 300), strings.Repeat("p", maxHolder) + "..."},
	{"long, cut inside a rune", "a" + strings.Repeat("é", 150), "a" + strings.Repeat("é", (maxHolder-1)/2) + "..."},
}

func TestHolder(t *testing.T) {
	for _, tt := range holderTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Holder([]byte(tt.file)); got != tt.want {
				t.Fatalf("Holder(%q) = %q, want %q", tt.file, got, tt.want)
			}
		})
	}
}

// TestTryLockDirHolder: the HeldError of a lock file that another holder
// filled with lines, escapes or megabytes names it on one short line.
func TestTryLockDirHolder(t *testing.T) {
	for _, tt := range append(holderTests, struct{ name, file, want string }{"huge", strings.Repeat("x", 8<<20), strings.Repeat("x", maxHolder) + "..."}) {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "LOCK")
			if err := os.WriteFile(p, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			_, err = TryLockDir(dir, "LOCK")
			var held *HeldError
			if !errors.As(err, &held) || held.Holder != tt.want {
				t.Fatalf("err = %v, want a HeldError naming %q", err, tt.want)
			}
		})
	}
}

// FuzzHolder: whatever a lock file holds, Holder shows it as one line
// of printable text of bounded length, and a line of printable text
// within the bound as it is.
func FuzzHolder(f *testing.F) {
	for _, tt := range holderTests {
		f.Add([]byte(tt.file))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h := Holder(b)
		if strings.ContainsFunc(h, func(r rune) bool { return !isPrintable(r) }) || len(h) > 4*maxHolder+5 {
			t.Fatalf("Holder(%q) = %q: not one short line of printable text", b, h)
		}
		if s := strings.TrimSpace(string(b)); len(s) <= maxHolder && !strings.ContainsFunc(s, func(r rune) bool { return !isPrintable(r) }) && h != s {
			t.Fatalf("Holder(%q) = %q, want it as it is", b, h)
		}
	})
}
