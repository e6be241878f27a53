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

// TestCommitErrorsSayWhereAndWhat: a commit that cannot lay out its
// snapshot directory names the dataset, the snapshot and the step.
func TestCommitErrorsSayWhereAndWhat(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T, d *Dataset, tx *Tx, staged string)
		want  string // with D for the dataset directory
	}{
		{"clearing a directory fails", func(t *testing.T, d *Dataset, tx *Tx, staged string) {
			// The state's directory (the commit also lays out the other
			// tables' 0-row files, in no set order).
			removeAll = func(p string) error {
				if filepath.Base(filepath.Dir(filepath.Dir(p))) != TableState {
					return os.RemoveAll(p)
				}
				return &os.PathError{Op: "unlinkat", Path: p, Err: syscall.EROFS}
			}
			t.Cleanup(func() { removeAll = os.RemoveAll })
		}, "dataset: D: publishing snapshot 1: removing what an unfinished commit left in state/v/000000000001: unlinkat D/state/v/000000000001: read-only file system"},
		{"a staged file is gone", func(t *testing.T, d *Dataset, tx *Tx, staged string) {
			if err := os.Remove(staged); err != nil {
				t.Fatal(err)
			}
		}, "dataset: D: publishing snapshot 1: table state: rename "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			info, err := WriteStaged(tx, TableState, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableState, "00", []FileInfo{info})
			tt.spoil(t, d, tx, tx.stagedFile(TableState, "00", info.Name))
			_, err = tx.Commit(context.Background(), CommitOptions{Writer: "test"})
			if err == nil {
				t.Fatal("committed")
			}
			if got := strings.ReplaceAll(err.Error(), d.Dir, "D"); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("error %q\nwant %q…", got, tt.want)
			}
			if _, err := os.Stat(filepath.Join(d.Dir, "manifests", manifestName(1))); err == nil {
				t.Fatal("the snapshot was published")
			}
		})
	}
}

// TestCommitReady: Ready is asked once the snapshot is built, under the
// lock, before the commit point. Its error stops the commit with nothing
// published (CURRENT unchanged, what was built removed) and comes back as
// it is; without an error the commit goes on.
func TestCommitReady(t *testing.T) {
	gone := errors.New("the reader went away")
	for _, tt := range []struct {
		name string
		err  error
		want int64 // the snapshot CURRENT names after the commit
	}{
		{"ready", nil, 1},
		{"not ready", gone, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			info, err := WriteStaged(tx, TableState, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableState, "00", []FileInfo{info})
			asked := 0
			ready := func() error {
				asked++
				if _, err := os.Stat(filepath.Join(d.Dir, "state", "v", "000000000001")); err != nil {
					t.Errorf("asked before the snapshot was built: %v", err)
				}
				return tt.err
			}
			_, err = tx.Commit(context.Background(), CommitOptions{Writer: "test", Ready: ready})
			if err != tt.err || asked != 1 {
				t.Fatalf("Commit: %v (Ready asked %d times), want %v after one question", err, asked, tt.err)
			}
			m, err := d.Current()
			if err != nil {
				t.Fatal(err)
			}
			if m.Snapshot != tt.want {
				t.Fatalf("CURRENT names snapshot %d, want %d", m.Snapshot, tt.want)
			}
			if u := d.Unpublished(m); len(u.Paths) != 0 {
				t.Fatalf("left unpublished: %v", u.Paths)
			}
		})
	}
}
