package schedule

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestLoadPolicySwapped: a FIFO, directory or (as root) device put at
// DIR/policy.json just before Load opens it (after any look at the
// path) is refused with one line naming it, and left; nothing blocks. A
// link to a policy is read through, as Save writes through one. With
// CheckRegularTarget before an os.Open, as before, the FIFO blocked Load
// for good (a link to a FIFO too), the directory failed with read(2)'s
// "is a directory" and the device with "empty or truncated JSON".
func TestLoadPolicySwapped(t *testing.T) {
	for _, tt := range []struct {
		name, kind string // kind: "" if Load reads it
		make       func(p, dir string) error
	}{
		{"FIFO", "a FIFO", func(p, _ string) error { return unix.Mkfifo(p, 0o644) }},
		{"directory", "a directory", func(p, _ string) error { return os.Mkdir(p, 0o755) }},
		{"device", "a device", func(p, _ string) error {
			if os.Geteuid() != 0 {
				return errors.New("not root")
			}
			return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		}},
		{"link to a FIFO", "a FIFO", func(p, dir string) error {
			if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(dir, "fifo"), p)
		}},
		{"link to a policy", "", func(p, dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "shared.json"), []byte("{}\n"), 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(dir, "shared.json"), p)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, side := t.TempDir(), t.TempDir()
			p := Path(dir)
			if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			aside := filepath.Join(side, "aside")
			if err := tt.make(aside, side); err != nil {
				t.Skipf("cannot make %s here: %v", tt.name, err)
			}
			made, err := os.Lstat(aside)
			if err != nil {
				t.Fatal(err)
			}
			orig := openPolicy
			t.Cleanup(func() { openPolicy = orig })
			openPolicy = func(path string, flag int, perm fs.FileMode) (*os.File, error) {
				if err := os.Remove(path); err != nil {
					t.Error(err)
				}
				if err := os.Rename(aside, path); err != nil {
					t.Error(err)
				}
				return orig(path, flag, perm)
			}
			err = fsutiltest.Unblocked(t, p, func() error { _, err := Load(dir); return err })
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("err %v; want the link read through", err)
				}
				return
			}
			var nr *fsutil.NotRegularError
			want := "policy: " + p + " is " + tt.kind + ", not a regular file: left as it is (move it away)"
			if !errors.As(err, &nr) || err.Error() != want || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v; want %q", err, want)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != made.Mode().Type() {
				t.Fatalf("%s is no longer %s: %v", p, tt.name, err)
			}
		})
	}
}

// TestLoadBlocklistNotRegular: a FIFO or directory at DIR/blocklist is
// refused with one line naming it, at once; a link to a blocklist is
// read through, as before. A FIFO there blocked plan-retries, export
// and status for good; a directory failed with read(2)'s "is a
// directory".
func TestLoadBlocklistNotRegular(t *testing.T) {
	for _, tt := range []struct {
		name, kind string // kind: "" if it is read
		make       func(p, dir string) error
	}{
		{"FIFO", "a FIFO", func(p, _ string) error { return unix.Mkfifo(p, 0o644) }},
		{"directory", "a directory", func(p, _ string) error { return os.Mkdir(p, 0o755) }},
		{"link to a blocklist", "", func(p, dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "shared"), []byte(hexA+"\n"), 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(dir, "shared"), p)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, BlocklistName)
			if err := tt.make(p, t.TempDir()); err != nil {
				t.Fatal(err)
			}
			var b Blocklist
			err := fsutiltest.Unblocked(t, p, func() (err error) { b, err = LoadBlocklist(dir); return err })
			if tt.kind == "" {
				if err != nil || !b.Contains(mustHash(t, hexA)) {
					t.Fatalf("%d entries, err %v; want the link read through", b.Len(), err)
				}
				return
			}
			want := "blocklist: " + p + " is " + tt.kind + ", not a regular file: left as it is (move it away)"
			if err == nil || err.Error() != want {
				t.Fatalf("err %v; want %q", err, want)
			}
		})
	}
}
