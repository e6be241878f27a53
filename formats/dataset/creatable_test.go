package dataset

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// layout makes the entries names in dir: a name ending in / a folder, any
// other an empty file (folders above it made as needed).
func layout(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreateOnlyInANewOrEmptyFolder: a dataset is made in a missing or
// empty folder, one that holds a dataset, or one that holds only what a
// dataset's writers, a creation or removal killed midway, or the
// documented setup (capture's dht-state/, crawl-pass's work/ and export/,
// its cron line's lock file) leave there. Any other folder (--data .,
// --data ~) is bad input with nothing written into it, its first entries
// named.
func TestCreateOnlyInANewOrEmptyFolder(t *testing.T) {
	creation := []string{"manifests/", "staging/", "inbox/", "LOCK"} // what create makes before the manifest
	for _, tc := range []struct {
		name    string
		entries []string // nil: the folder is missing
		wantErr string   // "": the dataset opens
	}{
		{"missing folder", nil, ""},
		{"empty folder", []string{}, ""},
		{"default policy written before the open", []string{"policy.json"}, ""},
		{"killed writing the default policy", []string{".tmp-policy.json-0123456789ab"}, ""},
		{"killed after making manifests/", creation[:1], ""},
		{"killed after making staging/", creation[:2], ""},
		{"killed after making inbox/", creation[:3], ""},
		{"killed holding the lock", creation, ""},
		{"killed writing manifest 0", append(slices.Clone(creation), "manifests/.tmp-000000000000.json-0123456789ab"), ""},
		{"killed before CURRENT", append(slices.Clone(creation), "manifests/000000000000.json", "policy.json"), ""},
		{"killed writing CURRENT", append(slices.Clone(creation), "manifests/000000000000.json", ".tmp-CURRENT-0123456789ab"), ""},
		{"removal of an unused dataset killed after CURRENT", append(slices.Clone(creation), "manifests/000000000000.json", "input-cache", "inbox/x/"), ""},
		{"a new filesystem mounted there", []string{"lost+found/"}, ""},
		{"capture's cron line (--help) before the first dedup", []string{"dht-state/dht-state.json", "in/obs-1765000000.parquet"}, ""},
		{"crawl-pass's first pass", []string{".pass.lock", "work/20261204T0415/", "export/", "dht-state/dht-state.json", "blocklist"}, ""},
		{"a dataset with the user's files", []string{"README", "notes/"}, "dataset first"},
		{"the user's files", []string{"README", "notes/", ".bashrc", "photo.jpg"}, `not an infohash dataset and not empty (it holds ".bashrc", "README", "notes", 1 more); give a new or empty folder`},
		{"one file of theirs among a killed creation's", append(slices.Clone(creation), "todo.txt"), `(it holds "todo.txt")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			if tc.wantErr == "dataset first" { // then the user's files join it
				d, err := Open(context.Background(), dir, OpenOptions{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				d.Close()
				tc.wantErr = ""
			}
			if tc.entries != nil {
				layout(t, dir, "./")
				layout(t, dir, tc.entries...)
			}
			var before []string
			if tc.entries != nil {
				before = fsutiltest.Names(t, dir)
			}
			// Makeable says what the open will, making nothing.
			if err := Makeable(dir); (err != nil) != (tc.wantErr != "") || (err != nil && !errors.Is(err, ErrNotEmpty)) {
				t.Fatalf("Makeable: %v; want an error %v", err, tc.wantErr != "")
			}
			if _, err := os.Lstat(dir); tc.entries == nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Makeable made %s (%v)", dir, err)
			}
			d, err := Open(context.Background(), dir, OpenOptions{Create: true})
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), dir+": not an infohash dataset") || !strings.Contains(err.Error(), tc.wantErr) ||
					exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v (exit %d), want one line with %q, exit %d", err, exitcode.Of(err), tc.wantErr, exitcode.Usage)
				}
				if after := fsutiltest.Names(t, dir); !slices.Equal(after, before) {
					t.Errorf("the refused folder holds %v, before %v", after, before)
				}
				if _, err := Use(dir); !errors.Is(err, ErrNotEmpty) { // the default policy's write
					t.Errorf("Use: %v, want %v", err, ErrNotEmpty)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			m := commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			if m.Snapshot != 1 || globRows(t, d) != 1 {
				t.Fatalf("commit after the open: snapshot %d, %d rows; want 1, 1", m.Snapshot, globRows(t, d))
			}
		})
	}
}

// TestMakeableMissingFolder: Makeable refuses, as a creating open does and
// making nothing, a missing folder whose parent is missing or a file, or
// which lies inside another dataset; a missing folder with a parent
// folder is one a dataset may be made in.
func TestMakeableMissingFolder(t *testing.T) {
	top := t.TempDir()
	layout(t, top, "file")
	outer := filepath.Join(top, "outer")
	d, err := Open(context.Background(), outer, OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, tc := range []struct {
		name, dir, wantErr string // wantErr "": nil
	}{
		{"a parent folder", filepath.Join(top, "ds"), ""},
		{"no parent", filepath.Join(top, "nope", "ds"), "its parent folder " + filepath.Join(top, "nope") + " does not exist to create one in"},
		{"a file for parent", filepath.Join(top, "file", "ds"), "is not a folder to create one in"},
		{"inside a dataset", filepath.Join(outer, "ds"), "inside the dataset " + outer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Makeable(tc.dir)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitcode.Of(err) != exitcode.Usage) {
				t.Fatalf("Makeable(%s) = %v (exit %d), want %q (exit %d)", tc.dir, err, exitcode.Of(err), tc.wantErr, exitcode.Usage)
			}
			if _, err := os.Lstat(tc.dir); !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				t.Fatalf("Makeable made %s (%v)", tc.dir, err)
			}
		})
	}
}

// envKillCreate makes TestKilledCreateHelper create a dataset in the
// folder it names (DIR|WHEN) and kill itself (-9) as creation writes
// manifest 0: before it (WHEN "before") or after it, before CURRENT
// ("after").
const envKillCreate = "INFOHASH_TEST_KILL_CREATE"

func TestKilledCreateHelper(t *testing.T) {
	dir, when, ok := strings.Cut(os.Getenv(envKillCreate), "|")
	if !ok {
		t.Skip("helper process")
	}
	writeFile = func(p string, b []byte) error {
		if when == "after" {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return err
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	Open(context.Background(), dir, OpenOptions{Create: true})
	t.Fatal("not killed")
}

// TestKilledCreateContinues: a run killed (-9) while it created the
// dataset, in a new folder or one crawl-pass had set up, leaves a folder
// that is no dataset yet; the next run creates it there and commits, with
// no one to clean up by hand.
func TestKilledCreateContinues(t *testing.T) {
	for _, when := range []string{"before", "after"} {
		for _, setup := range [][]string{nil, {".pass.lock", "work/1/", "export/", "dht-state/"}} {
			t.Run(when+" manifest 0, "+strings.Join(setup, " "), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "ds")
				if setup != nil {
					layout(t, dir, setup...)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCreateHelper$", "-test.count=1")
				cmd.Env = append(os.Environ(), envKillCreate+"="+dir+"|"+when)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("helper: %v\n%s", err, out)
				}
				_, statErr := os.Stat(filepath.Join(dir, "manifests", manifestName(0)))
				if ok, _ := hasCurrent(dir); ok || (when == "after") != (statErr == nil) {
					t.Fatalf("setup: the killed creation left %v", fsutiltest.Names(t, dir))
				}
				d, err := Open(context.Background(), dir, OpenOptions{Create: true})
				if err != nil {
					t.Fatalf("open after the kill (left %v): %v", fsutiltest.Names(t, dir), err)
				}
				defer d.Close()
				if !d.Created {
					t.Error("Created not set: the killed run had committed nothing")
				}
				if m := commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}}); m.Snapshot != 1 {
					t.Fatalf("commit: snapshot %d, want 1", m.Snapshot)
				}
			})
		}
	}
}
