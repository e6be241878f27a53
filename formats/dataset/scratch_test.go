package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// TestScratch: a scratch folder outlives another writer's Open however
// old it is while its writer lives; once the writer is gone (a run killed
// mid-way) the next Open removes it; Remove removes it at once; a
// read-only dataset has none.
func TestScratch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, dir, OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(s.Dir) != filepath.Join(dir, "staging") {
		t.Fatalf("scratch folder %s is not in %s", s.Dir, filepath.Join(dir, "staging"))
	}
	spill := filepath.Join(s.Dir, "spill")
	if err := os.WriteFile(spill, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(s.Dir, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spill); err != nil {
		t.Fatalf("another writer's Open removed a live scratch folder: %v", err)
	}
	s.owner.Close() // what its process's death does: the flock goes
	s.owner = nil
	if _, err := Open(ctx, dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead writer's scratch folder is left: %v", err)
	}

	s, err = d.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	s.Remove()
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Remove left %s: %v", s.Dir, err)
	}

	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.NewScratch(); !errors.Is(err, errReadOnly) {
		t.Fatalf("read-only NewScratch: err %v, want %v", err, errReadOnly)
	}
}

// TestCleanStagingAtOnce: a writer's Open removes the staging folder of a
// writer killed a moment ago at once (ownedDir's folders come into place
// locked), keeps a live writer's, and leaves a folder it cannot tell from
// one being set up (a temporary name, or one without the locked-at-birth
// mark) until it is a minute old.
func TestCleanStagingAtOnce(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		make    func(t *testing.T, d *Dataset) (dir string, keep func())
		age     time.Duration
		removed bool
	}{
		{"killed just now", func(t *testing.T, d *Dataset) (string, func()) {
			s, err := d.NewScratch()
			if err != nil {
				t.Fatal(err)
			}
			s.owner.Close() // its process died: the flock goes
			return s.Dir, func() {}
		}, 0, true},
		{"live", func(t *testing.T, d *Dataset) (string, func()) {
			s, err := d.NewScratch()
			if err != nil {
				t.Fatal(err)
			}
			return s.Dir, s.Remove
		}, time.Hour, false},
		{"being set up", func(t *testing.T, d *Dataset) (string, func()) {
			return mkStaging(t, d, fsutil.TempPrefix+"1-abc"), func() {}
		}, 0, false},
		{"set up, then dead", func(t *testing.T, d *Dataset) (string, func()) {
			return mkStaging(t, d, fsutil.TempPrefix+"1-abc"), func() {}
		}, 2 * time.Minute, true},
		{"earlier version, new", func(t *testing.T, d *Dataset) (string, func()) {
			return mkStaging(t, d, "1-abc"), func() {}
		}, 0, false},
		{"earlier version, dead", func(t *testing.T, d *Dataset) (string, func()) {
			return mkStaging(t, d, "1-abc"), func() {}
		}, 2 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := Open(ctx, dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			sd, keep := tc.make(t, d)
			defer keep()
			if tc.age > 0 {
				old := time.Now().Add(-tc.age)
				if err := os.Chtimes(sd, old, old); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := Open(ctx, dir, OpenOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = os.Stat(sd)
			if gone := errors.Is(err, os.ErrNotExist); gone != tc.removed {
				t.Fatalf("%s: removed %v, want %v (stat: %v)", filepath.Base(sd), gone, tc.removed, err)
			}
		})
	}
}

// mkStaging makes DIR/staging/name with a .owner file no one holds.
func mkStaging(t *testing.T, d *Dataset, name string) string {
	t.Helper()
	p := filepath.Join(d.Dir, "staging", name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, ".owner"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCleanStagingFlockFailed: a writer whose shared flock on .owner
// failed (ENOLCK: an NFS mount without its lock daemon) holds no lock
// that tells its folder from a dead writer's; its folder is not named
// born locked, so the next writer leaves it until it is a minute old,
// as before folders were born locked, instead of removing a live
// writer's staged files at once.
func TestCleanStagingFlockFailed(t *testing.T) {
	defer func(f func(*os.File) error) { flockShared = f }(flockShared)
	flockShared = func(*os.File) error { return syscall.ENOLCK }
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Open(ctx, dir, OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	if _, err := Open(ctx, dir, OpenOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); err != nil {
		t.Fatalf("a live writer's folder, its flock failed: %v", err)
	}
}
