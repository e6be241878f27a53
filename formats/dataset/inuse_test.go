package dataset

import (
	"context"
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
