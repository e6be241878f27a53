package fsutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestDescribePIDOneLine: a process that holds a stream file is named
// from its command line, which it sets: a name with a newline or an
// escape is shown quoted, on one line.
func TestDescribePIDOneLine(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	cmd := &exec.Cmd{Path: sleep, Args: []string{"/x/evil\nname\x1b[2J", "30"}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	want := fmt.Sprintf(`"evil\nname\x1b[2J 30" (pid %d)`, cmd.Process.Pid)
	for i := 0; i < 100; i++ { // until the child has exec'd
		if got := describePID(cmd.Process.Pid); got == want || i == 99 {
			if got != want {
				t.Fatalf("describePID = %q, want %q", got, want)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FuzzDescribeCmdline: whatever command line a process set, the name
// of it in an error is one short line of printable text, and that of an
// infohash command is "infohash COMMAND (pid N)".
func FuzzDescribeCmdline(f *testing.F) {
	for _, s := range []string{"/usr/bin/infohash\x00capture\x00--dht-state\x00d\x00", "infohash\x00-v\x00", "", "\x00", "/\x00x\x00",
		"a\nb\x00c", "sh\x00-c\x00x", strings.Repeat("x", 300)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := describeCmdline(b, 7)
		if strings.ContainsFunc(d, func(r rune) bool { return !isPrintable(r) }) || len(d) > 4*maxHolder+20 || !strings.HasSuffix(d, "pid 7") && !strings.HasSuffix(d, "(pid 7)") {
			t.Fatalf("describeCmdline(%q) = %q", b, d)
		}
		if args := strings.Split(string(b), "\x00"); len(args) > 2 && args[0] == "infohash" && args[1] != "" && len(args[1]) < 100 &&
			!strings.HasPrefix(args[1], "-") && !strings.ContainsFunc(args[1], func(r rune) bool { return !isPrintable(r) }) && strings.TrimSpace(args[1]) == args[1] {
			if want := "infohash " + args[1] + " (pid 7)"; d != want {
				t.Fatalf("describeCmdline(%q) = %q, want %q", b, d, want)
			}
		}
	})
}
