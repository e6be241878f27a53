package dataset

import (
	"context"
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

// swapKinds are what a test puts at a dataset's file just before its
// open: made at aside (a copy of what is at p, for a link), then renamed
// over p.
var swapKinds = []struct {
	name, kind string
	make       func(aside, p string) error
}{
	{"FIFO", "a FIFO", func(aside, _ string) error { return unix.Mkfifo(aside, 0o644) }},
	{"directory", "a directory", func(aside, _ string) error { return os.Mkdir(aside, 0o755) }},
	// A link to a copy of what was there: read through, it would work.
	{"symbolic link", "a symbolic link", func(aside, p string) error {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		cp := filepath.Join(filepath.Dir(filepath.Dir(p)), "copy-"+filepath.Base(p))
		if err := os.WriteFile(cp, b, 0o644); err != nil {
			return err
		}
		return os.Symlink(cp, aside)
	}},
	{"device", "a device", func(aside, _ string) error {
		if os.Geteuid() != 0 {
			return errors.New("not root")
		}
		return unix.Mknod(aside, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
	}},
}

// swapper returns a hook that, at its first call for path p, renames
// aside over p (what was at p goes), and a func that reports whether it
// did.
func swapper(t *testing.T, p, aside string) (hook func(path string), swapped func() bool) {
	done := false
	return func(path string) {
		if path != p || done {
			return
		}
		done = true
		if err := os.RemoveAll(p); err != nil {
			t.Error(err)
		}
		if err := os.Rename(aside, p); err != nil {
			t.Error(err)
		}
	}, func() bool { return done }
}

// TestManagedFileSwapped: a FIFO, directory, symbolic link or (as root)
// device put at CURRENT, the manifest CURRENT names, LOCK or policy.json
// after anything looked at the path, just before the open (the open's
// hook swaps it in), is refused as one found there is
// (TestManagedFileNotRegular): one line naming it, left as it is, nothing
// blocked. policy.json is read through a link on purpose. With the
// check (fsutil.CheckRegular) before an open by name, as before, the
// same swap blocked the run for good on a FIFO at CURRENT, the manifest
// or policy.json, read CURRENT and the manifest through the link, read
// the device's nothing as an empty CURRENT, and locked the FIFO, link or
// device at LOCK.
func TestManagedFileSwapped(t *testing.T) {
	places := []struct {
		name   string
		path   func(d *Dataset) string
		follow bool // a link is followed (policy.json)
		hook   func(t *testing.T, hook func(string))
		op     func(dir string) error // what opens it
	}{
		{"CURRENT", func(d *Dataset) string { return d.Path("CURRENT") }, false, hookManaged, readCurrent},
		{"current manifest", func(d *Dataset) string { return d.Path("manifests", manifestName(1)) }, false, hookManaged, readCurrent},
		{"LOCK", func(d *Dataset) string { return d.Path("LOCK") }, false, func(t *testing.T, hook func(string)) {
			orig := openLockFile
			openLockFile = func(path string) (*os.File, error) { hook(path); return orig(path) }
			t.Cleanup(func() { openLockFile = orig })
		}, func(dir string) error {
			l, err := LockWriter(context.Background(), dir, 0)
			l.Release()
			return err
		}},
		{"policy.json", func(d *Dataset) string { return d.Path(policyFile) }, true, func(t *testing.T, hook func(string)) {
			orig := openPolicy
			openPolicy = func(path string, flag int, perm fs.FileMode) (*os.File, error) {
				hook(path)
				return orig(path, flag, perm)
			}
			t.Cleanup(func() { openPolicy = orig })
		}, readPolicyOf},
	}
	for _, k := range swapKinds {
		for _, pl := range places {
			t.Run(k.name+"/"+pl.name, func(t *testing.T) {
				d := openNew(t)
				if err := os.WriteFile(d.Path(policyFile), []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				commitRows(t, d, "00", stateRows(0, 0, 1)) // snapshot 1
				p := pl.path(d)
				aside := p + ".aside"
				if err := k.make(aside, p); err != nil {
					t.Skipf("cannot make %s here: %v", k.kind, err)
				}
				made, err := os.Lstat(aside)
				if err != nil {
					t.Fatal(err)
				}
				hook, swapped := swapper(t, p, aside)
				pl.hook(t, hook)
				err = fsutiltest.Unblocked(t, p, func() error { return pl.op(d.Dir) })
				if !swapped() {
					t.Fatalf("nothing opened %s", p)
				}
				if pl.follow && k.name == "symbolic link" {
					if err != nil {
						t.Fatalf("err %v; want the link to a copy read through", err)
					}
					return
				}
				var nr *fsutil.NotRegularError
				if !errors.As(err, &nr) || nr.Path != p || nr.Kind != k.kind || strings.Contains(err.Error(), "\n") ||
					!strings.Contains(err.Error(), p+" is "+k.kind+", not a regular file: left as it is") {
					t.Fatalf("err %v; want one line saying %s is %s, left as it is", err, p, k.kind)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != made.Mode().Type() {
					t.Fatalf("%s is no longer %s: %v", p, k.kind, err)
				}
			})
		}
	}
}

// hookManaged sets openManaged to run hook before each open, for the
// rest of the test.
func hookManaged(t *testing.T, hook func(string)) {
	orig := openManaged
	openManaged = func(path string, flag int, perm fs.FileMode) (*os.File, error) {
		hook(path)
		return orig(path, flag, perm)
	}
	t.Cleanup(func() { openManaged = orig })
}

// readCurrent opens the dataset at dir and reads its current snapshot.
func readCurrent(dir string) error {
	d, err := Open(context.Background(), dir, OpenOptions{})
	if err != nil {
		return err
	}
	_, err = d.Current()
	return err
}

// readPolicyOf begins a transaction on the dataset at dir and returns the
// error of its read of the policy file.
func readPolicyOf(dir string) error {
	tx, err := (&Dataset{Dir: dir}).Begin()
	if err != nil {
		return err
	}
	defer tx.Abort()
	_, _, err = tx.PolicyFile()
	return err
}
