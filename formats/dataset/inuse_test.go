package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveUnusedSparesOpenDataset: a run whose input was bad does not
// remove the new dataset while another run that started at the same time
// has it open, whether that run is waiting for the lock to create it or
// has it opened and not yet begun its transaction; that run then commits.
// Once no other run has it open, it is removed.
func TestRemoveUnusedSparesOpenDataset(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(t *testing.T, dir string, removed func()) (*Dataset, error)
	}{
		{"opened, no transaction yet", func(t *testing.T, dir string, removed func()) (*Dataset, error) {
			d, err := Open(ctx, dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			removed()
			return d, nil
		}},
		{"creating, between opening LOCK and locking it", func(t *testing.T, dir string, removed func()) (*Dataset, error) {
			if err := os.Mkdir(dir, 0o755); err != nil { // what the bad run made
				t.Fatal(err)
			}
			onLockOpened(t, func(string) { removed() })
			return Open(ctx, dir, OpenOptions{Create: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			var kept string
			d, err := tc.open(t, dir, func() {
				var err error
				if kept, err = RemoveUnused(dir, nil); err != nil {
					t.Fatal(err)
				}
			})
			if err != nil {
				t.Fatalf("Open while another run removed the dataset: %v", err)
			}
			if kept != "another run has it open" {
				t.Fatalf("RemoveUnused kept %q; want it kept for the run that has it open", kept)
			}
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(ctx, CommitOptions{Writer: "test"}); err != nil {
				t.Fatalf("commit of the run that had the dataset open: %v", err)
			}
			d.Close()
			if kept, err := RemoveUnused(dir, nil); err != nil || kept != "snapshot 1 was committed" {
				t.Fatalf("after the commit: kept %q, err %v", kept, err)
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ds")
		d, err := Open(ctx, dir, OpenOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		if kept, err := RemoveUnused(dir, nil); kept != "" || err != nil {
			t.Fatalf("kept %q, err %v; want it removed", kept, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("%s left behind (stat: %v)", dir, err)
		}
	})
}

// TestCleanupSparesReadOnlyOpen: a read-only open (status, export) holds
// the folder's shared flock as a writer's Open does, so a failing first
// writer's clean-up (RemoveUnused, or EmptyUnused for a folder that was
// there empty) leaves the new dataset while it is being read, and
// removes it once the reader has closed it. The reader used to take no
// lock, and saw the folder vanish under it.
func TestCleanupSparesReadOnlyOpen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cleanUp func(dir string, policy []byte) (string, error)
		dirLeft bool // the folder itself stays once cleaned up
	}{
		{"RemoveUnused", RemoveUnused, false},
		{"EmptyUnused", EmptyUnused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			w, err := Open(context.Background(), dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			w.Close() // the failing first writer, before its clean-up
			r, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := tc.cleanUp(dir, nil)
			if err != nil || kept != "another run has it open" {
				t.Fatalf("clean-up under a reader: kept %q, err %v; want it kept", kept, err)
			}
			if m, err := r.Current(); err != nil || m.Snapshot != 0 {
				t.Fatalf("the reader's snapshot: %v, %v", m, err)
			}
			r.Close()
			r.Close()
			if kept, err := tc.cleanUp(dir, nil); kept != "" || err != nil {
				t.Fatalf("after the reader closed: kept %q, err %v; want it cleaned up", kept, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "CURRENT")); !os.IsNotExist(err) {
				t.Fatalf("CURRENT left behind (stat: %v)", err)
			}
			if _, err := os.Stat(dir); (err == nil) != tc.dirLeft {
				t.Fatalf("the folder: stat %v, want it left: %v", err, tc.dirLeft)
			}
		})
	}
}

// TestFailedReadOnlyOpenHoldsNoFlock: a read-only open that fails (the
// folder holds no dataset) leaves the folder's flock, so a clean-up
// removes it; a read-only open of the removed folder then says so
// (ErrNoFolder).
func TestFailedReadOnlyOpenHoldsNoFlock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(dir); !errors.Is(err, ErrNotDataset) {
		t.Fatalf("OpenReadOnly of an empty folder: %v, want ErrNotDataset", err)
	}
	if kept, err := RemoveUnused(dir, nil); kept != "" || err != nil {
		t.Fatalf("the failed read-only open kept the folder in use: kept %q, err %v", kept, err)
	}
	if _, err := OpenReadOnly(dir); !errors.Is(err, ErrNoFolder) {
		t.Fatalf("OpenReadOnly of a removed folder: %v, want ErrNoFolder", err)
	}
}
