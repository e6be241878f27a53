package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/parquet-go/parquet-go"
)

// oldDataset writes a dataset of format version by hand, as the migration
// tests do: one state file in the schema of that format (format 1's
// lacks columns; format 3's has them all), and format 3's ledger inline
// in the manifest.
func oldDataset(t *testing.T, version int) string {
	t.Helper()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "state", "v", "000000000004", "prefix=ab")
	os.MkdirAll(pdir, 0o755)
	os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
	os.MkdirAll(filepath.Join(dir, "staging", "123-dead"), 0o755) // a dead writer's debris
	var err error
	if version == 1 {
		err = parquet.WriteFile(filepath.Join(pdir, "old.parquet"),
			[]schematest.StateV1{{InfoHash: schema.Hash{0xab, 1}, HashType: 1, SeenCount: 7, MetadataStatus: "failed", Attempts: 3, Tier: "hot"}})
	} else {
		err = parquet.WriteFile(filepath.Join(pdir, "old.parquet"),
			[]schema.State{{InfoHash: schema.Hash{0xab, 1}, HashType: 1, SeenCount: 7, MetadataStatus: "failed", Attempts: 3, Tier: "hot"}})
	}
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{FormatVersion: version, Snapshot: 4, Tables: map[string]*Table{TableState: {Dir: "state/v/000000000004",
		Partitions: map[string][]FileInfo{"ab": {{Name: "old.parquet", Rows: 1}}}}},
		Applied: []Applied{{ID: "sha-1", Name: "in.parquet", Rows: 1}}}
	if err := writeManifest(filepath.Join(dir, "manifests", manifestName(4)), m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte(manifestName(4)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOpenReadOnlyWritesNothing: an older format is read as it is, with
// no migration, no lock (not even a LOCK file, nor while a writer holds
// it) and no cleaning of staging/; Begin refuses.
func TestOpenReadOnlyWritesNothing(t *testing.T) {
	for _, tt := range []struct {
		name    string
		version int
		locked  bool
	}{
		{"format 1", 1, false},
		{"format 3", 3, false},
		{"format 3 while a writer holds the lock", 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := oldDataset(t, tt.version)
			if tt.locked {
				l, err := acquireLock(context.Background(), dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			before := fsutiltest.Tree(t, dir)
			d, err := OpenReadOnly(dir)
			if err != nil {
				t.Fatal(err)
			}
			m, err := d.Current()
			if err != nil || m.FormatVersion != tt.version || m.Snapshot != 4 {
				t.Fatalf("read format %d snapshot %d (%v), want the dataset as it is", m.FormatVersion, m.Snapshot, err)
			}
			st := m.Table(TableState)
			got, err := statecol.ReadStateFile(d.DataFile(m, TableState, "ab", st.Partitions["ab"][0]))
			if err != nil || len(got) != 1 || got[0].SeenCount != 7 || got[0].BackoffStep != 0 {
				t.Fatalf("rows %+v, %v", got, err)
			}
			if a, err := d.LastApplied(m); err != nil || a == nil || a.ID != "sha-1" {
				t.Fatalf("last applied %+v, %v", a, err)
			}
			if tx, err := d.Begin(); err == nil {
				tx.Abort()
				t.Fatal("Begin on a read-only dataset")
			}
			after := fsutiltest.Tree(t, dir)
			for p, s := range after {
				if before[p] != s {
					t.Errorf("%s: %q, was %q", p, s, before[p])
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("%s removed", p)
				}
			}
		})
	}
}

func TestReadableFormat(t *testing.T) {
	for _, tt := range []struct {
		name            string
		version, oldest int
		want            string // "" for readable
	}{
		{"current", FormatVersion, 1, ""},
		{"older, readable", 3, 1, ""},
		{"older than the readers read", 2, 3, "dataset D is format 2; run a writer (dedup or merge) once to migrate it"},
		{"newer", FormatVersion + 1, 1, fmt.Sprintf("dataset: D: format %d is newer than this build's %d; upgrade infohash", FormatVersion+1, FormatVersion)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := readableFormat("D", tt.version, tt.oldest)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("got %v (exit %d), want %q, exit 2", err, exitcode.Of(err), tt.want)
			}
		})
	}
}

func TestOpenReadOnlyNotADataset(t *testing.T) {
	dir := t.TempDir()
	_, err := OpenReadOnly(dir)
	if !errors.Is(err, ErrNotDataset) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d entries in %s", len(ents), dir)
	}
}

// TestNoFolderOrNoDataset: a --data that does not exist is named as such,
// by writers (Open without Create) and readers alike; an existing folder
// without CURRENT is "not an infohash dataset".
func TestNoFolderOrNoDataset(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(t.TempDir(), "ds")
	d, err := Open(context.Background(), ds, OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	tests := []struct {
		name, dir string
		want      error
		also      string // in the message too
	}{
		{"missing", filepath.Join(root, "typo"), ErrNoFolder, ""},
		{"under a file", filepath.Join(file, "ds"), ErrNoFolder, ""},
		{"empty folder", root, ErrNotDataset, ""},
		// --data DIR/state for DIR: say which folder was meant.
		{"inside a dataset", filepath.Join(ds, "manifests"), ErrNotDataset, "; it lies inside the dataset " + ds + ": give that folder"},
		{"missing inside a dataset", filepath.Join(ds, "stat"), ErrNoFolder, "; it lies inside the dataset " + ds + ": give that folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rerr := OpenReadOnly(tt.dir)
			for _, err := range []error{rerr} {
				if !errors.Is(err, tt.want) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.dir+":") ||
					!strings.Contains(err.Error(), tt.also) {
					t.Fatalf("got %v (exit %d), want %v naming %s (and %q), exit 2", err, exitcode.Of(err), tt.want, tt.dir, tt.also)
				}
			}
			if tt.also != "" {
				return // writers refuse a folder inside a dataset before this (NestedError)
			}
			_, werr := Open(context.Background(), tt.dir, OpenOptions{})
			if !errors.Is(werr, tt.want) || exitcode.Of(werr) != exitcode.Usage || !strings.Contains(werr.Error(), tt.dir) {
				t.Fatalf("got %v (exit %d), want %v naming %s, exit 2", werr, exitcode.Of(werr), tt.want, tt.dir)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "typo")); !os.IsNotExist(err) {
		t.Fatalf("opening a missing folder made it: %v", err)
	}
}
