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
	"github.com/infohash/infohash/formats/schema"
)

// TestManagedFileNotRegular: a FIFO, directory, symbolic link or (as
// root) device where the dataset keeps CURRENT, the manifest CURRENT
// names, the manifest the next commit writes, or LOCK (a user's mistake,
// or something planted) stops the run with one line naming it and what
// it is, and is left as it is. Before, a FIFO at CURRENT or at the
// current manifest blocked every run for good (SIGTERM did not end it), a
// link at CURRENT was read through and then replaced by a regular file,
// whatever sat at the next manifest's name was removed as a dead
// commit's debris (a directory with all it held) and written over, a
// directory at LOCK failed with open(2)'s "is a directory", and a FIFO,
// link or device there was locked (a FIFO then blocked the next writer's
// read of the holder's line for good).
func TestManagedFileNotRegular(t *testing.T) {
	kinds := []struct {
		name, kind string
		mode       fs.FileMode
		make       func(p string) error
	}{
		{"FIFO", "a FIFO", fs.ModeNamedPipe, func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"directory", "a directory", fs.ModeDir, func(p string) error { return os.Mkdir(p, 0o755) }},
		// A link to a copy of what was there: read through, it would work.
		{"symbolic link", "a symbolic link", fs.ModeSymlink, func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			cp := filepath.Join(filepath.Dir(filepath.Dir(p)), "copy-"+filepath.Base(p))
			if err := os.WriteFile(cp, b, 0o644); err != nil {
				return err
			}
			return os.Symlink(cp, p)
		}},
		{"device", "a device", fs.ModeDevice | fs.ModeCharDevice, func(p string) error {
			if os.Geteuid() != 0 {
				return errors.New("not root")
			}
			return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		}},
	}
	places := []struct {
		name string
		path func(d *Dataset) string
	}{
		{"CURRENT", func(d *Dataset) string { return d.Path("CURRENT") }},
		{"current manifest", func(d *Dataset) string { return d.Path("manifests", manifestName(1)) }},
		{"next manifest", func(d *Dataset) string { return d.Path("manifests", manifestName(2)) }},
		{"LOCK", func(d *Dataset) string { return d.Path("LOCK") }},
	}
	row := func(b byte) []schema.State {
		return []schema.State{{InfoHash: schema.Hash{b}, HashType: 1, SeenCount: 1, MetadataStatus: "new", Tier: "hot"}}
	}
	for _, k := range kinds {
		for _, pl := range places {
			t.Run(k.name+"/"+pl.name, func(t *testing.T) {
				d := openNew(t)
				commitRows(t, d, "00", row(0)) // snapshot 1
				p := pl.path(d)
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
				if err := k.make(p); err != nil {
					t.Skipf("cannot make %s here: %v", k.kind, err)
				}
				err := fsutiltest.Unblocked(t, p, func() error {
					d2, err := Open(context.Background(), d.Dir, OpenOptions{})
					if err != nil {
						return err
					}
					if _, err := d2.Current(); err != nil {
						return err
					}
					tx, err := d2.Begin()
					if err != nil {
						return err
					}
					info, err := WriteStaged(tx, TableState, "01", row(1))
					if err != nil {
						tx.Abort()
						return err
					}
					tx.SetPartition(TableState, "01", []FileInfo{info})
					_, err = tx.Commit(context.Background(), CommitOptions{Writer: "test"})
					return err
				})
				var nr *fsutil.NotRegularError
				if !errors.As(err, &nr) || nr.Path != p || nr.Kind != k.kind || strings.Contains(err.Error(), "\n") ||
					!strings.Contains(err.Error(), p+" is "+k.kind+", not a regular file: left as it is") {
					t.Fatalf("err %v; want one line saying %s is %s, left as it is", err, p, k.kind)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode().Type() != k.mode.Type() {
					t.Fatalf("%s is no longer %s: %v", p, k.kind, err)
				}
			})
		}
	}
}
