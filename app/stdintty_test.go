package app

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStdinTerminalRefused: dedup, fetch and merge given "-" with stdin a
// terminal (a real pseudo-terminal, opened as posix_openpt does: no
// test hook) refuse at once, exit 2, saying what
// to pipe in, and make nothing; they waited in silence for input nobody
// types, and on Ctrl-C said stdin was empty.
func TestStdinTerminalRefused(t *testing.T) {
	dir, data := seedDataset(t)
	in := filepath.Join(dir, "h.txt")
	fresh := filepath.Join(dir, "fresh")
	out := filepath.Join(dir, "results.parquet")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dedup", []string{"dedup", "--data", data, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, a file too", []string{"dedup", "--data", data, in, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, a new dataset", []string{"dedup", "--data", fresh, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"fetch", []string{"fetch", "--no-dht", "-o", out, "-"},
			"fetch: stdin is a terminal: pipe jobs in (plan-retries --data D -o - | fetch - -o FILE) or name a file"},
		{"merge", []string{"merge", "--data", data, "-"},
			"merge: stdin is a terminal: pipe results in (fetch JOBS -o - | merge --data D -) or name a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty := openPTY(t) // output_test.go's
			type result struct {
				stderr string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				var stdout, stderr bytes.Buffer
				code := Main(append([]string{"infohash"}, tc.args...), tty, &stdout, &stderr)
				done <- result{stderr.String(), code}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				ptmx.Close() // the terminal hangs up: its reads fail
				r = <-done
				t.Fatalf("waited on the terminal for 20 s; then exit %d, stderr %q", r.code, r.stderr)
			}
			if want := "infohash: " + tc.want + "\n"; r.code != 2 || r.stderr != want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
			}
			for _, p := range []string{fresh, out} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s was made (%v)", p, err)
				}
			}
			if got, _ := filepath.Glob(filepath.Join(data, "inbox", "*")); len(got) > 0 {
				t.Fatalf("the inbox holds %q", got)
			}
		})
	}
}

// TestNamedTerminalRefused: an input named by path that is a terminal
// (here a pseudo-terminal's /dev/pts/N; /dev/tty and /dev/stdin from a
// terminal are the same) is refused as "-" on a terminal is: exit 2, one
// line naming it, nothing made. dedup and merge spooled it into
// DIR/inbox/ and waited in silence for lines nobody types; fetch and
// export --blocklist waited too.
func TestNamedTerminalRefused(t *testing.T) {
	dir, data := seedDataset(t)
	in := filepath.Join(dir, "h.txt")
	fresh := filepath.Join(dir, "fresh")
	out := filepath.Join(dir, "results.parquet")
	csv := filepath.Join(dir, "state.csv")
	_, tty := openPTY(t)
	name := tty.Name()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dedup", []string{"dedup", "--data", data, name},
			"dedup: " + name + " is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, after a file", []string{"dedup", "--data", data, in, name},
			"dedup: " + name + " is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, a new dataset", []string{"dedup", "--data", fresh, name},
			"dedup: " + name + " is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"fetch", []string{"fetch", "--no-dht", "-o", out, name},
			"fetch: " + name + " is a terminal: pipe jobs in (plan-retries --data D -o - | fetch - -o FILE) or name a file"},
		{"merge", []string{"merge", "--data", data, name},
			"merge: " + name + " is a terminal: pipe results in (fetch JOBS -o - | merge --data D -) or name a file"},
		{"export --blocklist", []string{"export", "--data", data, "-o", csv, "--blocklist", name},
			"export: --blocklist: " + name + " is a terminal: name a file of hashes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				stderr string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				var stdout, stderr bytes.Buffer
				code := Main(append([]string{"infohash"}, tc.args...), bytes.NewReader(nil), &stdout, &stderr)
				done <- result{stderr.String(), code}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("waited on the terminal for 20 s") // the pty's Cleanup hangs it up
			}
			if want := "infohash: " + tc.want + "\n"; r.code != 2 || r.stderr != want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
			}
			for _, p := range []string{fresh, out, csv} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s was made (%v)", p, err)
				}
			}
			if got, _ := filepath.Glob(filepath.Join(data, "inbox", "*")); len(got) > 0 {
				t.Fatalf("the inbox holds %q", got)
			}
		})
	}
}

// TestIsTerminalPath: only a terminal is one; a FIFO is not opened (its
// open would wait for a writer), nor is anything but a character device.
func TestIsTerminalPath(t *testing.T) {
	_, tty := openPTY(t)
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "h.txt"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       bool
	}{
		{"a pseudo-terminal", tty.Name(), true},
		{"/dev/null", os.DevNull, false},
		{"a regular file", file, false},
		{"a FIFO nobody writes to", fifo, false},
		{"a folder", dir, false},
		{"missing", filepath.Join(dir, "nope"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan bool, 1)
			go func() { got <- isTerminalPath(tc.path) }()
			select {
			case g := <-got:
				if g != tc.want {
					t.Fatalf("isTerminalPath(%s) = %v, want %v", tc.path, g, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("isTerminalPath(%s) blocked", tc.path)
			}
		})
	}
}

// TestNamedStreamsStillRead: /dev/stdin redirected from a file, and a
// FIFO, are not terminals: dedup applies them as before.
func TestNamedStreamsStillRead(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(list, []byte(hexLines("named", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("/dev/stdin from a file", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "ds")
		f, err := os.Open(list)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(infohashBinary(t), "dedup", "--data", data, "--now", "2026-03-01T00:00:00Z", "/dev/stdin")
		cmd.Stdin = f // the file itself, not a pipe
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if b := mustRun(t, nil, "export", "--data", data, "--format", "csv", "-o", "-"); bytes.Count(b, []byte("\n")) != 4 {
			t.Fatalf("export:\n%s\nwant a header and 3 rows", b)
		}
	})
	t.Run("a FIFO", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "ds")
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := unix.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		go func() {
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.WriteString(hexLines("named", 3))
				w.Close()
			}
		}()
		if _, stderr, code := runMain(t, "dedup", "--data", data, "--now", "2026-03-01T00:00:00Z", fifo); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}
