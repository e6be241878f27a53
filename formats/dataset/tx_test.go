package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestStagePathMakesEachFolderOnce: writers staging files of one table at
// once (a stage writes its partitions in parallel) make the table's
// staging folder once between them. Each made it, and when two raced the
// loser's mkdir failed with EEXIST: a syscall that came and went between
// runs, and with it a kill point of scripts/killsweep.sh. A mkdir that
// failed is tried again by the next writer.
func TestStagePathMakesEachFolderOnce(t *testing.T) {
	const writers = 8
	tests := []struct {
		name      string
		tables    []string
		failFirst bool // the first mkdir fails (ENOSPC)
		want      int  // mkdir calls
	}{
		{name: "one table", tables: []string{TableState}, want: 1},
		{name: "two tables", tables: []string{TableState, TablePeers}, want: 2},
		{name: "the first mkdir fails", tables: []string{TableState}, failFirst: true, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Abort()
			var mu sync.Mutex
			calls := 0
			mkdirAll = func(p string, m os.FileMode) error {
				mu.Lock()
				calls++
				fail := tt.failFirst && calls == 1
				mu.Unlock()
				if fail {
					return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOSPC}
				}
				return os.MkdirAll(p, m)
			}
			t.Cleanup(func() { mkdirAll = os.MkdirAll })
			if tt.failFirst {
				if _, err := tx.StagePath(tt.tables[0], "00", NewName(".parquet")); !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("StagePath with mkdir failing: %v, want its ENOSPC", err)
				}
			}
			start := make(chan struct{})
			errs := make(chan error, writers*len(tt.tables))
			var wg sync.WaitGroup
			for _, table := range tt.tables {
				for i := range writers {
					wg.Go(func() {
						<-start
						p, err := tx.StagePath(table, fmt.Sprintf("%02x", i), NewName(".parquet"))
						if err == nil {
							err = os.WriteFile(p, []byte("x"), 0o644)
						}
						errs <- err
					})
				}
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("staging a file: %v", err)
				}
			}
			if calls != tt.want {
				t.Fatalf("%d mkdir calls for %d writers of each of %d tables, want %d", calls, writers, len(tt.tables), tt.want)
			}
		})
	}
}
