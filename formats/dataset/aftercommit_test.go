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

// TestAfterCommitError: a step after CURRENT's rename that fails leaves
// the snapshot committed, and Commit says so: the new manifest with an
// *AfterCommitError naming the snapshot and what failed. gc runs unless
// the rename may not be durable, and never removes what a table's
// current link still names; the next Open rolls the links forward.
func TestAfterCommitError(t *testing.T) {
	for _, tt := range []struct {
		name string
		// spoil makes a step after the commit point fail (it may not
		// chmod: tests may run as root); unspoil undoes it.
		spoil, unspoil func(t *testing.T, d *Dataset)
		want, end      string // how the error starts (D for the dataset directory) and ends
		durable        bool
		gc             bool   // gc ran (keep 1: snapshot 1's manifest is gone)
		linked         string // where state/current points after the commit ("" not a link)
	}{
		{
			name: "a link that cannot be replaced",
			spoil: func(t *testing.T, d *Dataset) {
				// Renaming the new link over a non-empty directory fails.
				link := d.Path(TableState, "current")
				mustDo(t, os.Remove(link), os.MkdirAll(filepath.Join(link, "x"), 0o755))
			},
			unspoil: func(t *testing.T, d *Dataset) { mustDo(t, os.RemoveAll(d.Path(TableState, "current"))) },
			want:    "dataset: D: committed snapshot 2; then: pointing state/current at v/000000000002: rename: ", // EISDIR, or EEXIST on some file systems
			end:     " (the dataset's readers see it; the next writer points the tables' current links at it)",
			durable: true, gc: true,
		},
		{
			name: "a link that cannot be made",
			spoil: func(t *testing.T, d *Dataset) {
				mustDo(t, os.MkdirAll(d.Path(TableState, ".tmp-current", "x"), 0o755))
			},
			unspoil: func(t *testing.T, d *Dataset) { mustDo(t, os.RemoveAll(d.Path(TableState, ".tmp-current"))) },
			want:    "dataset: D: committed snapshot 2; then: pointing state/current at v/000000000002: symlink: file exists (",
			end:     "the next writer points the tables' current links at it)",
			durable: true, gc: true, linked: "v/000000000001",
		},
		{
			name: "the fsync after the rename fails",
			spoil: func(t *testing.T, d *Dataset) {
				syncDir = func(dir string) error {
					if dir == d.Dir {
						return &os.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
					}
					return nil
				}
			},
			unspoil: func(t *testing.T, d *Dataset) {},
			want:    "dataset: D: committed snapshot 2; then: fsync of the directory after renaming CURRENT: input/output error (CURRENT names it, but a crash of the machine may yet bring back snapshot 1)",
			end:     "bring back snapshot 1)",
			linked:  "v/000000000002",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() { syncDir, gcStarts = realSyncDir, nil })
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			info, err := WriteStaged(tx, TableState, "01", []schema.State{{InfoHash: schema.Hash{1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(TableState, "01", []FileInfo{info})
			tt.spoil(t, d)
			gcRan := false
			gcStarts = func() { gcRan = true }
			m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test", Keep: 1})
			syncDir, gcStarts = realSyncDir, nil

			ac, ok := AsAfterCommit(err)
			if !ok {
				t.Fatalf("error %v, want an AfterCommitError", err)
			}
			if got := strings.ReplaceAll(err.Error(), d.Dir, "D"); !strings.HasPrefix(got, tt.want) || !strings.HasSuffix(got, tt.end) {
				t.Fatalf("error %q\nwant %q…%q", got, tt.want, tt.end)
			}
			if m == nil || m.Snapshot != 2 || ac.Snapshot != 2 || ac.Durable != tt.durable {
				t.Fatalf("manifest %v, error's snapshot %d, durable %v; want snapshot 2, durable %v", m, ac.Snapshot, ac.Durable, tt.durable)
			}
			if cur, err := d.Current(); err != nil || cur.Snapshot != 2 {
				t.Fatalf("CURRENT: %v, %v; want snapshot 2", cur, err)
			}
			if gcRan != tt.gc {
				t.Fatalf("gc ran: %v, want %v", gcRan, tt.gc)
			}
			_, err = os.Stat(d.Path("manifests", manifestName(1)))
			if gone := errors.Is(err, os.ErrNotExist); gone != tt.gc {
				t.Fatalf("snapshot 1's manifest removed: %v, want %v", gone, tt.gc)
			}
			if got, _ := os.Readlink(d.Path(TableState, "current")); got != tt.linked {
				t.Fatalf("state/current -> %q, want %q", got, tt.linked)
			}
			if tt.linked != "" { // the directory a link names stays
				if _, err := os.Stat(d.Path(TableState, tt.linked)); err != nil {
					t.Fatalf("gc removed what state/current names: %v", err)
				}
			}

			tt.unspoil(t, d)
			if _, err := Open(context.Background(), d.Dir, OpenOptions{}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.Readlink(d.Path(TableState, "current")); got != "v/000000000002" {
				t.Fatalf("after Open, state/current -> %q, want the committed snapshot's v/000000000002", got)
			}
			if n := globRows(t, d); n != 2 {
				t.Fatalf("the glob sees %d rows, want 2", n)
			}
		})
	}
}

var realSyncDir = syncDir

// mustDo fails the test at the first of errs that is not nil.
func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
