package fsutil

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// irregulars are the things a test puts where a regular file was: the
// kind NotRegularError names each by, and how to make it at p (dir is a
// folder beside p for a link's target).
var irregulars = []struct {
	name, kind string
	make       func(p, dir string) error
}{
	{"FIFO", "a FIFO", func(p, _ string) error { return unix.Mkfifo(p, 0o600) }},
	{"directory", "a directory", func(p, _ string) error { return os.Mkdir(p, 0o755) }},
	// To a regular file: read through, it would work.
	{"link to a file", "a symbolic link", func(p, dir string) error {
		t := filepath.Join(dir, "target")
		if err := os.WriteFile(t, []byte("through the link\n"), 0o644); err != nil {
			return err
		}
		return os.Symlink(t, p)
	}},
	{"link to a FIFO", "a symbolic link", func(p, dir string) error {
		t := filepath.Join(dir, "fifo")
		if err := unix.Mkfifo(t, 0o600); err != nil {
			return err
		}
		return os.Symlink(t, p)
	}},
	{"dangling link", "a symbolic link", func(p, dir string) error { return os.Symlink(filepath.Join(dir, "nothing"), p) }},
	{"socket", "a socket", func(p, _ string) error {
		_, err := net.Listen("unix", p) // closed with the test's process
		return err
	}},
	{"device", "a device", func(p, _ string) error {
		if os.Geteuid() != 0 {
			return errors.New("not root")
		}
		return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
	}},
}

// TestOpenRegularSwapped: whatever is put at a path between a check of
// it and its open (openingRegular swaps it in just before the open(2))
// is refused, as CheckRegular refuses it, with one line naming it, and
// left as it is; nothing blocks. CheckRegular then os.OpenFile instead
// blocks for good on a FIFO opened to read, locks or reads a device,
// and follows a link (to a FIFO: blocks again). OpenRegularTarget
// follows a link on purpose, and refuses what it leads to unless that
// is a regular file; it takes a dangling link for nothing there.
func TestOpenRegularSwapped(t *testing.T) {
	opens := []struct {
		name   string
		open   func(p string) (*os.File, error)
		follow bool
	}{
		{"OpenRegular read", func(p string) (*os.File, error) { return OpenRegular(p, os.O_RDONLY, 0) }, false},
		{"OpenRegular lock file", func(p string) (*os.File, error) { return OpenRegular(p, os.O_RDWR|os.O_CREATE, 0o666) }, false},
		{"OpenRegularTarget read", func(p string) (*os.File, error) { return OpenRegularTarget(p, os.O_RDONLY, 0) }, true},
	}
	for _, k := range irregulars {
		for _, o := range opens {
			t.Run(k.name+"/"+o.name, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "CURRENT")
				if err := os.WriteFile(p, []byte("000000000001.json\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if CheckRegular(p) != nil {
					t.Fatal("a regular file refused")
				}
				// Made aside, then renamed over p just before the open.
				aside := filepath.Join(dir, "aside")
				if err := k.make(aside, dir); err != nil {
					t.Skipf("cannot make %s here: %v", k.kind, err)
				}
				made, err := os.Lstat(aside)
				if err != nil {
					t.Fatal(err)
				}
				swapped := false
				openingRegular = func(path string) {
					if path != p || swapped {
						return
					}
					swapped = true
					if err := os.Remove(p); err != nil {
						t.Error(err)
					}
					if err := os.Rename(aside, p); err != nil {
						t.Error(err)
					}
				}
				defer func() { openingRegular = nil }()
				var f *os.File
				err = fsutiltest.Unblocked(t, p, func() (err error) { f, err = o.open(p); return err })
				if !swapped {
					t.Fatal("the hook did not run")
				}
				want := k.kind
				if o.follow {
					switch k.name {
					case "link to a file":
						want = ""
					case "link to a FIFO":
						want = "a FIFO"
					case "dangling link":
						if !errors.Is(err, fs.ErrNotExist) {
							t.Fatalf("err %v; want it to be nothing there", err)
						}
						return
					}
				}
				if want == "" {
					if err != nil {
						t.Fatalf("err %v; want the link followed", err)
					}
					b, err := io.ReadAll(f)
					f.Close()
					if err != nil || string(b) != "through the link\n" {
						t.Fatalf("read %q, %v through the link", b, err)
					}
					return
				}
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Path != p || nr.Kind != want ||
					err.Error() != p+" is "+want+", not a regular file: left as it is (move it away)" {
					t.Fatalf("err %v (file %v); want %s refused as %s", err, f, p, want)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != made.Mode().Type() {
					t.Fatalf("%s is no longer %s: %v", p, k.kind, err)
				}
				if _, err := os.Lstat(filepath.Join(dir, "nothing")); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("the dangling link's target was made: %v", err)
				}
			})
		}
	}
}

// TestOpenRegularFile: a regular file opens as os.OpenFile opens it, in
// blocking mode (O_NONBLOCK, there only for the open, is cleared), and
// O_CREATE makes a missing one with perm less the umask; nothing there
// without O_CREATE is fs.ErrNotExist, in os.OpenFile's words.
func TestOpenRegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "LOCK")
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	for _, tt := range []struct {
		name string
		open func() (*os.File, error)
	}{
		{"OpenRegular", func() (*os.File, error) { return OpenRegular(p, os.O_RDWR|os.O_CREATE, 0o666) }},
		{"OpenRegularTarget", func() (*os.File, error) { return OpenRegularTarget(p, os.O_RDWR|os.O_CREATE, 0o666) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(p)
			f, err := tt.open()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
			if err != nil || fl&unix.O_NONBLOCK != 0 {
				t.Fatalf("flags %#x, %v; want O_NONBLOCK cleared", fl, err)
			}
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
				t.Fatalf("made %v, %v; want a regular file of mode 0644", fi, err)
			}
			if _, err := f.WriteString("host=h pid=1\n"); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "host=h pid=1\n" {
				t.Fatalf("wrote %q, %v", b, err)
			}
		})
	}
	missing := filepath.Join(dir, "missing")
	for _, open := range []func(string, int, fs.FileMode) (*os.File, error){OpenRegular, OpenRegularTarget} {
		_, err := open(missing, os.O_RDONLY, 0)
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || err.Error() != "open "+missing+": no such file or directory" {
			t.Fatalf("err %v; want os.Open's for nothing there", err)
		}
	}
}

// TestReadHolderNotRegular: the holder's line is read only from a
// regular LOCK file: a FIFO, directory, link or device there says no
// holder, at once. With os.Open, a FIFO (or a link to one) blocked the
// read for good, and a link's target was shown as the holder.
func TestReadHolderNotRegular(t *testing.T) {
	for _, k := range irregulars {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "LOCK")
			if err := k.make(p, dir); err != nil {
				t.Skipf("cannot make %s here: %v", k.kind, err)
			}
			var got string
			fsutiltest.Unblocked(t, p, func() error { got = ReadHolder(p); return nil })
			if got != "" {
				t.Fatalf("holder %q; want none", got)
			}
		})
	}
}

// BenchmarkOpenRegular: OpenRegular and a Close of a small regular file,
// against os.Open's (what the dataset's readers did, after an lstat:
// CheckRegular).
func BenchmarkOpenRegular(b *testing.B) {
	p := filepath.Join(b.TempDir(), "CURRENT")
	if err := os.WriteFile(p, []byte("000000000001.json\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name string
		open func() (*os.File, error)
	}{
		{"OpenRegular", func() (*os.File, error) { return OpenRegular(p, os.O_RDONLY, 0) }},
		{"CheckRegular+os.Open", func() (*os.File, error) {
			if err := CheckRegular(p); err != nil {
				return nil, err
			}
			return os.Open(p)
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				f, err := bb.open()
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
