package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestRemoveUnused: a dataset created for a run that committed nothing is
// removed (EmptyUnused: its folder emptied), unless it holds something
// worth keeping.
func TestRemoveUnused(t *testing.T) {
	write := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, d *Dataset)
		kept  string // in the reason given; "" if removed
	}{
		{"fresh", func(*testing.T, *Dataset) {}, ""},
		{"with its default policy", func(t *testing.T, d *Dataset) { write(t, d.Path("policy.json")) }, ""},
		{"with dedup's input cache", func(t *testing.T, d *Dataset) { write(t, d.Path(InputCacheFile)) }, ""},
		{"a policy someone set", func(t *testing.T, d *Dataset) {
			if err := os.WriteFile(d.Path("policy.json"), []byte("set"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "policy.json someone set"},
		{"creation cut short before CURRENT", func(t *testing.T, d *Dataset) {
			os.Remove(d.Path("CURRENT"))
		}, ""},
		{"debris of a commit that failed before CURRENT", func(t *testing.T, d *Dataset) {
			write(t, d.Path("manifests", manifestName(1)))
			write(t, d.Path(TableState, "v", "000000000001", "prefix=00", "part-1.parquet"))
			write(t, d.Path(".tmp-CURRENT-1"))
		}, ""},
		{"an empty inbox folder of merge", func(t *testing.T, d *Dataset) {
			os.MkdirAll(d.Path("inbox", "merge"), 0o755)
		}, ""},
		{"committed", func(t *testing.T, d *Dataset) {
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"}); err != nil {
				t.Fatal(err)
			}
		}, "snapshot 1 was committed"},
		{"bad stdin set aside", func(t *testing.T, d *Dataset) { write(t, d.Path("inbox", "stdin-1.spool.bad")) }, "inbox/stdin-1.spool.bad"},
		{"a spool being written", func(t *testing.T, d *Dataset) { write(t, d.Path("inbox", ".tmp-x.spool-1")) }, "inbox/.tmp-x.spool-1"},
		{"a merge spool", func(t *testing.T, d *Dataset) { write(t, d.Path("inbox", "merge", "r.spool")) }, "inbox/merge/r.spool"},
		{"a partial batch", func(t *testing.T, d *Dataset) { write(t, d.Path("inbox", PartialPrefix+"1.arrow")) }, "inbox/partial-1.arrow"},
		{"a writer staging", func(t *testing.T, d *Dataset) {
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(tx.Abort)
		}, "a writer is staging"},
		{"a file of the user's", func(t *testing.T, d *Dataset) { write(t, d.Path("notes.txt")) }, "notes.txt"},
		{"open in another run", func(t *testing.T, d *Dataset) {
			other, err := Open(context.Background(), d.Dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
		}, "another run has it open"},
		{"locked", func(t *testing.T, d *Dataset) {
			l, err := LockWriter(context.Background(), d.Dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(l.Release)
		}, "another writer holds its lock"},
	} {
		for _, keepDir := range []bool{false, true} {
			name, remove := tc.name, RemoveUnused
			if keepDir {
				name, remove = tc.name+" (EmptyUnused)", EmptyUnused
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "ds")
				d, err := Open(context.Background(), dir, OpenOptions{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				tc.setup(t, d)
				d.Close() // the run is done with it
				// write's bytes stand for the default policy.
				kept, err := remove(dir, []byte("x"))
				if err != nil {
					t.Fatal(err)
				}
				ents, serr := os.ReadDir(dir)
				switch {
				case tc.kept == "" && keepDir:
					if kept != "" || serr != nil || len(ents) > 0 {
						t.Fatalf("kept %q, left %v (%v); want %s emptied", kept, ents, serr, dir)
					}
					return
				case tc.kept == "":
					if kept != "" || !os.IsNotExist(serr) {
						t.Fatalf("kept %q (stat: %v), want %s removed", kept, serr, dir)
					}
					return
				}
				if !strings.Contains(kept, tc.kept) || serr != nil {
					t.Fatalf("kept %q (stat: %v), want it kept for %q", kept, serr, tc.kept)
				}
				if _, err := os.Stat(filepath.Join(dir, "manifests", manifestName(0))); err != nil {
					t.Errorf("a kept dataset lost its snapshot 0: %v", err)
				}
			})
		}
	}
	t.Run("missing", func(t *testing.T) {
		if kept, err := RemoveUnused(filepath.Join(t.TempDir(), "none"), nil); kept != "" || err != nil {
			t.Fatalf("kept %q, err %v; want nothing done", kept, err)
		}
	})
}

// TestClearUnused: in a folder that held the user's entries and no
// dataset (those a dataset may be created among: crawl-pass's, capture's),
// a dataset created for a run that committed nothing goes, and
// exactly the user's entries stay; anything else worth keeping keeps it
// all, as RemoveUnused does.
func TestClearUnused(t *testing.T) {
	theirs := []string{".pass.lock", "dht-state", "inbox", "work"}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		kept  string // in the reason given; "" if removed
	}{
		{"fresh", func(*testing.T, string) {}, ""},
		{"with its default policy", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "policy.json"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a file that came meanwhile", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "notes.txt"},
		{"a file in the inbox it found", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "inbox", "a.bad"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "inbox/a.bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			for _, p := range []string{"inbox", "work", "dht-state"} {
				if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{".pass.lock", filepath.Join("dht-state", "dht-state.json"), filepath.Join("work", "x")} {
				if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Open(context.Background(), dir, OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			d.Close()
			kept, err := ClearUnused(dir, []byte("x"), theirs)
			if err != nil {
				t.Fatal(err)
			}
			names := fsutiltest.Names(t, dir)
			if tc.kept != "" {
				if !strings.Contains(kept, tc.kept) || !slices.Contains(names, "CURRENT") {
					t.Fatalf("kept %q, left %v; want the dataset kept for %q", kept, names, tc.kept)
				}
				return
			}
			if kept != "" || !slices.Equal(names, theirs) {
				t.Fatalf("kept %q, left %v; want only %v", kept, names, theirs)
			}
			if _, err := os.Stat(filepath.Join(dir, "work", "x")); err != nil {
				t.Errorf("a file in the user's folder went: %v", err)
			}
		})
	}
}

// TestRemoveUnusedWithoutRoomForLock: a run that made DIR and failed
// before it made DIR/LOCK because the file system had no room left (no
// inode for LOCK either) leaves DIR as it found it: RemoveUnused, which
// cannot make LOCK to take the writer lock, removes what the run made
// (DIR, or what it put in an empty DIR) on the claim on DIR alone. With
// a LOCK there, or another failure, it takes the lock or fails as
// before.
func TestRemoveUnusedWithoutRoomForLock(t *testing.T) {
	orig := openLockFile // put back after each subtest that replaces it
	noRoom := func(t *testing.T) {
		openLockFile = func(path string) (*os.File, error) {
			if _, err := os.Lstat(path); err == nil {
				return os.OpenFile(path, os.O_RDWR, 0)
			}
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}
		}
		t.Cleanup(func() { openLockFile = orig })
	}
	// What dataset creation leaves when it stops at each step before LOCK.
	for _, tc := range []struct {
		name string
		made []string // dirs ending in /, else files holding the default policy
	}{
		{"an empty folder", nil},
		{"the default policy", []string{"policy.json"}},
		{"policy and folders", []string{"policy.json", "manifests/", "staging/", "inbox/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := []byte("{}\n")
			for _, keepDir := range []bool{false, true} {
				dir := filepath.Join(t.TempDir(), "ds")
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, m := range tc.made {
					p := filepath.Join(dir, m)
					var err error
					if strings.HasSuffix(m, "/") {
						err = os.Mkdir(p, 0o755)
					} else {
						err = os.WriteFile(p, policy, 0o644)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				noRoom(t)
				remove := RemoveUnused
				if keepDir {
					remove = EmptyUnused
				}
				kept, err := remove(dir, policy)
				if err != nil || kept != "" {
					t.Fatalf("keepDir %v: kept %q, error %v; want it removed", keepDir, kept, err)
				}
				ents, err := os.ReadDir(dir)
				switch {
				case !keepDir && !os.IsNotExist(err):
					t.Errorf("the folder is still there (%v)", err)
				case keepDir && (err != nil || len(ents) > 0):
					t.Errorf("the folder holds %d entries (%v); want it empty", len(ents), err)
				}
			}
		})
	}

	t.Run("LOCK there", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ds")
		if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		noRoom(t)
		if kept, err := RemoveUnused(dir, nil); err != nil || kept != "" {
			t.Fatalf("kept %q, error %v", kept, err)
		}
	})

	t.Run("another error", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "ds")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		openLockFile = func(path string) (*os.File, error) {
			return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EIO}
		}
		t.Cleanup(func() { openLockFile = orig })
		if _, err := RemoveUnused(dir, nil); !errors.Is(err, syscall.EIO) {
			t.Fatalf("error %v; want the lock's EIO", err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the folder went: %v", err)
		}
	})
}
