package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDatasetFileNotRegular: a FIFO, directory or symbolic link where a
// dataset keeps one of its own files stops a run with one line naming
// it (exit 1, as for a damaged manifest; 2 for policy.json, as for a
// policy that cannot be read) and is left there. A FIFO at CURRENT, at
// the current manifest or at policy.json blocked every run for good
// (SIGTERM too); a link at CURRENT was read through, then replaced; a
// directory at LOCK failed with open(2)'s error, a FIFO there was locked.
func TestDatasetFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "h1.txt"), filepath.Join(dir, "h2.txt")
	for p, seed := range map[string]string{first: "notregular-1", second: "notregular-2"} {
		if err := os.WriteFile(p, []byte(hexLines(seed, 3)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(p string) error { return unix.Mkfifo(p, 0o644) }
	mkdir := func(p string) error { return os.Mkdir(p, 0o755) }
	link := func(p string) error { return os.Symlink(filepath.Join(dir, "h1.txt"), p) }
	for _, tt := range []struct {
		name, file, kind string
		make             func(string) error
		args             []string
		code             int
	}{
		{"dedup, FIFO at CURRENT", "CURRENT", "a FIFO", fifo, []string{"dedup", second}, 1},
		{"status, FIFO at CURRENT", "CURRENT", "a FIFO", fifo, []string{"status"}, 1},
		{"dedup, link at CURRENT", "CURRENT", "a symbolic link", link, []string{"dedup", second}, 1},
		{"plan-retries, FIFO at the manifest", "manifests/000000000001.json", "a FIFO", fifo, []string{"plan-retries", "-o", "-"}, 1},
		{"dedup, directory at the next manifest", "manifests/000000000002.json", "a directory", mkdir, []string{"dedup", second}, 1},
		{"dedup, FIFO at policy.json", "policy.json", "a FIFO", fifo, []string{"dedup", second}, 2},
		{"dedup, directory at LOCK", "LOCK", "a directory", mkdir, []string{"dedup", second}, 1},
		{"dedup, FIFO at LOCK", "LOCK", "a FIFO", fifo, []string{"dedup", second}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			if _, stderr, code := runMain(t, "dedup", "--data", data, first); code != 0 {
				t.Fatalf("dedup: exit %d\n%s", code, stderr)
			}
			p := filepath.Join(data, tt.file)
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := tt.make(p); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(p)
			args := append([]string{tt.args[0], "--data", data}, tt.args[1:]...)
			type ran struct {
				stderr string
				code   int
			}
			done := make(chan ran, 1)
			go func() {
				_, stderr, code := runMain(t, args...)
				done <- ran{stderr, code}
			}()
			var r ran
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				if w, err := os.OpenFile(p, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					w.Close() // let the blocked read go
				}
				<-done
				t.Fatalf("%v still running after a minute (blocked on %s?)", args, p)
			}
			want := p + " is " + tt.kind + ", not a regular file: left as it is (move it away)\n"
			if r.code != tt.code || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, want) {
				t.Fatalf("exit %d, stderr %q; want %d and one line ending %q", r.code, r.stderr, tt.code, want)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != before.Mode().Type()&fs.ModeType {
				t.Fatalf("%s is no longer %s: %v", p, tt.kind, err)
			}
		})
	}
}
