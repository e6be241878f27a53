package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCommitRefusesWhatCameSince: what is made at an output's path after
// CreateOutput looked (a new name, or a regular file) and before Commit
// (a FIFO, a device, a directory, a symbolic link: a /dev/null made
// again after it was missing for a moment) is not replaced: Commit
// fails naming it, and the temporary file goes. ReplacingStream.Start
// refuses the same. Commit's rename replaced the FIFO, the device and
// the link with a regular file.
func TestCommitRefusesWhatCameSince(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(p string) error
		kind fs.FileMode
	}{
		{"FIFO", func(p string) error { return unix.Mkfifo(p, 0o600) }, fs.ModeNamedPipe},
		{"device", func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) },
			fs.ModeDevice | fs.ModeCharDevice},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, fs.ModeDir},
		{"symbolic link", func(p string) error { return os.Symlink("elsewhere", p) }, fs.ModeSymlink},
	} {
		for _, how := range []string{"CreateOutput, new", "CreateOutput, regular", "ReplaceStream"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "out")
				if how != "CreateOutput, new" {
					if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				var commit func() error
				end := func() error { return nil }
				if how == "ReplaceStream" {
					r, err := ReplaceStream(p, time.Hour)
					if err != nil {
						t.Fatal(err)
					}
					commit, end = r.Start, r.Close
				} else {
					f, err := CreateOutput(p)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := f.Write([]byte("new\n")); err != nil {
						t.Fatal(err)
					}
					commit = f.Commit
				}
				os.Remove(p)
				if err := c.make(p); err != nil {
					t.Skipf("cannot make a %s here: %v", c.name, err)
				}
				err := commit()
				if err == nil || !strings.Contains(err.Error(), "not a regular file: not replaced") {
					t.Fatalf("commit: %v, want it refused", err)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != c.kind {
					t.Fatalf("%s replaced: %v", c.name, err)
				}
				if err := end(); err != nil { // ReplaceStream's temporary file goes
					t.Fatal(err)
				}
				onlyEntries(t, dir, "out")
			})
		}
	}
}
