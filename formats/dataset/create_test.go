package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestCreateOnlyTheLastFolder: Open with Create makes DIR, never the
// folders above it (a mistyped --data must not grow a tree), and says
// when it made a new dataset.
func TestCreateOnlyTheLastFolder(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, wantErr string
	}{
		{"new folder in an existing one", filepath.Join(root, "ds"), ""},
		{"trailing slash", filepath.Join(root, "ds2") + "/", ""},
		{"missing parents", filepath.Join(root, "typo", "a", "b"), "parent folder " + filepath.Join(root, "typo", "a") + " does not exist"},
		{"parent is a file", filepath.Join(file, "ds"), file + " is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(context.Background(), tc.dir, OpenOptions{Create: true})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !d.Created {
					t.Error("Created not set for a new dataset")
				}
				again, err := Open(context.Background(), tc.dir, OpenOptions{Create: true})
				if err != nil || again.Created {
					t.Errorf("reopen: Created=%v err=%v", again != nil && again.Created, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d), want %q with exit %d", err, exitcode.Of(err), tc.wantErr, exitcode.Usage)
			}
			if _, err := os.Stat(filepath.Join(root, "typo")); !os.IsNotExist(err) {
				t.Errorf("a folder was made: %v", err)
			}
		})
	}
}

// TestCreateSyncsItsFoldersFirst: a dataset made in an existing empty
// folder (durable already) has its new subfolders' entries durable before
// CURRENT is renamed into that folder: else a power cut after the rename
// reached the disk, but not the mkdir of manifests/, leaves a CURRENT
// naming a manifest that is not there (make fsaudit's model: a rename may
// reach the disk before its folder is synced).
func TestCreateSyncsItsFoldersFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		exist bool
	}{
		{"an existing empty folder", true},
		{"a new folder", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			if tc.exist {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var before bool // dir synced while it held manifests/ and no CURRENT
			t.Cleanup(func() { syncDir = realSyncDir })
			syncDir = func(d string) error {
				_, errM := os.Stat(filepath.Join(dir, "manifests"))
				_, errC := os.Stat(filepath.Join(dir, "CURRENT"))
				if d == dir && errM == nil && os.IsNotExist(errC) {
					before = true
				}
				return realSyncDir(d)
			}
			d, err := Open(context.Background(), dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if !before {
				t.Error("no fsync of the dataset's folder between the mkdir of its subfolders and the rename of CURRENT")
			}
		})
	}
}
