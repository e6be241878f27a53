package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestStagingFolderErrorSaysWhy: when a table's staging folder cannot be
// made (a file system out of inodes fails mkdir with ENOSPC, as
// plan-retries' leases folder did on a full tmpfs), staging a file fails
// with that error, naming the folder, not with the open of a file in a
// folder that is not there ("no such file or directory"); nothing is
// published and the next transaction stages and commits.
func TestStagingFolderErrorSaysWhy(t *testing.T) {
	d := openNew(t)
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mkdirAll = func(p string, m os.FileMode) error {
		return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOSPC}
	}
	t.Cleanup(func() { mkdirAll = os.MkdirAll })
	rows := []schema.Lease{{InfoHash: schema.Hash{1}, LeaseID: "L1"}}
	_, err = WriteStaged(tx, TableLeases, "", rows)
	tx.Abort()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error %v; want the staging folder's ENOSPC", err)
	}
	want := "mkdir " + filepath.Join(d.Dir, "staging")
	if !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "/"+TableLeases+": no space left on device") {
		t.Errorf("error %q does not name the folder (%s…/%s)", err, want, TableLeases)
	}

	mkdirAll = os.MkdirAll
	tx, err = d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	info, err := WriteStaged(tx, TableLeases, "", rows)
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableLeases, "", []FileInfo{info})
	if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}
