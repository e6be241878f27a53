package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRenameRefusesNotRegular: the files Create, CreateLocked, WriteFile
// and ReplaceFile write (a dataset's CURRENT, manifests and inbox
// spools) are renamed only over a regular file or nothing, by the rule
// CreateOutput's outputs follow (Irregular): a FIFO, directory, symbolic
// link or (as root) device at the path is left as it is, the error says
// what it is (NotRegularError), and the temporary file goes, or stays
// for CommitKeeping's caller to set aside. The rename replaced the FIFO,
// the link and the device with a regular file.
func TestRenameRefusesNotRegular(t *testing.T) {
	kinds := []struct {
		name, kind string
		make       func(p string) error
	}{
		{"FIFO", "a FIFO", func(p string) error { return unix.Mkfifo(p, 0o600) }},
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"symbolic link", "a symbolic link", func(p string) error { return os.Symlink("elsewhere", p) }},
		{"device", "a device", func(p string) error {
			if os.Geteuid() != 0 {
				return errors.New("not root")
			}
			return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		}},
	}
	writers := []struct {
		name  string
		write func(p string) (kept string, err error)
	}{
		{"WriteFile", func(p string) (string, error) { return "", WriteFile(p, []byte("new\n")) }},
		{"ReplaceFile", func(p string) (string, error) { return "", ReplaceFile(p, []byte("new\n")) }},
		{"CreateLocked+CommitKeeping", func(p string) (string, error) {
			f, lk, err := CreateLocked(p)
			if err != nil {
				return "", err
			}
			defer lk.Close()
			if _, err := f.Write([]byte("new\n")); err != nil {
				return "", err
			}
			return f.CommitKeeping()
		}},
	}
	for _, k := range kinds {
		for _, w := range writers {
			t.Run(k.name+"/"+w.name, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "CURRENT")
				if err := k.make(p); err != nil {
					t.Skipf("cannot make %s here: %v", k.kind, err)
				}
				before, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				kept, err := w.write(p)
				var nr *NotRegularError
				if !errors.As(err, &nr) || nr.Path != p || nr.Kind != k.kind ||
					err.Error() != p+" is "+k.kind+", not a regular file: left as it is (move it away)" {
					t.Fatalf("err %v; want %s refused as %s", err, p, k.kind)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != before.Mode().Type() {
					t.Fatalf("%s was replaced: %v", k.kind, err)
				}
				if w.name == "CreateLocked+CommitKeeping" {
					if b, err := os.ReadFile(kept); err != nil || string(b) != "new\n" {
						t.Fatalf("CommitKeeping kept %q: %q, %v; want the bytes written", kept, b, err)
					}
					os.Remove(kept)
				}
				onlyEntries(t, dir, "CURRENT")
			})
		}
	}
}

// TestCheckRegular: CheckRegular refuses a FIFO, a directory and a
// symbolic link, even to a regular file; CheckRegularTarget follows the
// link, so refuses one to a FIFO but takes one to a regular file. Both
// take a regular file and nothing.
func TestCheckRegular(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, err := range []error{
		os.WriteFile(at("file"), nil, 0o644),
		unix.Mkfifo(at("fifo"), 0o600),
		os.Mkdir(at("dir"), 0o755),
		os.Symlink("file", at("link-to-file")),
		os.Symlink("fifo", at("link-to-fifo")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name            string
		regular, target string // the kind each refuses it as; "": taken
	}{
		{"file", "", ""},
		{"missing", "", ""},
		{"fifo", "a FIFO", "a FIFO"},
		{"dir", "a directory", "a directory"},
		{"link-to-file", "a symbolic link", ""},
		{"link-to-fifo", "a symbolic link", "a FIFO"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				check func(string) error
				want  string
			}{{CheckRegular, tt.regular}, {CheckRegularTarget, tt.target}} {
				err := c.check(at(tt.name))
				var nr *NotRegularError
				if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &nr) || nr.Kind != c.want) {
					t.Errorf("%s: %v, want %q", tt.name, err, c.want)
				}
			}
		})
	}
}
