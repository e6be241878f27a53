package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestBeginRead: a transaction that only reads has the current snapshot
// and policy, on a dataset opened read-only too, and writes nothing:
// staging and committing are refused, Abort leaves DIR as it was.
func TestBeginRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ih")
	d, err := Open(context.Background(), dir, OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	before := fsutiltest.Tree(t, dir)
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("opened read-only %v", readOnly), func(t *testing.T) {
			d, err := Open(context.Background(), dir, OpenOptions{})
			if readOnly {
				d.Close()
				d, err = OpenReadOnly(dir)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			tx, err := d.BeginRead()
			if err != nil {
				t.Fatal(err)
			}
			if tx.Base() == nil || tx.Base().Snapshot != 0 {
				t.Errorf("base %+v, want snapshot 0", tx.Base())
			}
			if _, _, err := tx.PolicyFile(); err != nil {
				t.Errorf("PolicyFile: %v", err)
			}
			if _, err := tx.StagePath("state", "00", "part-x.parquet"); !errors.Is(err, errReadOnly) {
				t.Errorf("StagePath: %v, want it refused", err)
			}
			if _, err := tx.Commit(context.Background(), CommitOptions{}); !errors.Is(err, errReadOnly) {
				t.Errorf("Commit: %v, want it refused", err)
			}
			tx.Abort()
		})
	}
	after := fsutiltest.Tree(t, dir)
	delete(after, filepath.Join(dir, "LOCK")) // Open's maintenance may make it
	delete(before, filepath.Join(dir, "LOCK"))
	for p, s := range after {
		if before[p] != s {
			t.Errorf("%s: %q, was %q", p, s, before[p])
		}
	}
}

// TestNotWritable: a write refused for want of permission or on a
// read-only file system says so in one line naming the dataset and the
// folder; other errors pass unchanged.
func TestNotWritable(t *testing.T) {
	d := &Dataset{Dir: "/srv/ih"}
	for _, tc := range []struct {
		name string
		path string
		err  error
		want string
	}{
		{"EROFS in staging", "/srv/ih/staging", &fs.PathError{Op: "mkdir", Path: "/srv/ih/staging/x", Err: unix.EROFS},
			"dataset /srv/ih is not writable (staging): read-only file system; a writer cannot commit there"},
		{"EACCES in DIR", "/srv/ih", unix.EACCES, "dataset /srv/ih is not writable: permission denied; a writer"},
		{"EPERM", "/srv/ih/manifests", unix.EPERM, "dataset /srv/ih is not writable (manifests): operation not permitted;"},
		{"ENOSPC passes", "/srv/ih", unix.ENOSPC, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.notWritable(tc.path, tc.err)
			if !strings.HasPrefix(err.Error(), tc.want) || errors.Is(err, errNotWritable) != (tc.err != unix.ENOSPC) {
				t.Errorf("notWritable(%s, %v) = %q, want it to begin %q", tc.path, tc.err, err, tc.want)
			}
		})
	}
}
