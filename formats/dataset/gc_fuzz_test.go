package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzTableDirs: gc keeps the snapshot directories that the newest
// manifests name, read leniently by tableDirs, which never fails. Of a
// manifest that parseManifest accepts it keeps at least every table's
// directory: one missed would be removed under a live snapshot.
func FuzzTableDirs(f *testing.F) {
	good, edited := manifestSeeds(f)
	f.Add(good)
	for _, b := range edited {
		f.Add(b)
	}
	f.Add([]byte(`{"format_version":3,"snapshot":1,"tables":{"state":{"DIR":"state/v/000000000001","partitions":{}}}}`))
	f.Add([]byte(`{"tables":{"state":{"dir":"a","dir":"state/v/000000000001"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "manifests", "000000000001.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs := tableDirs(path)
		m, err := parseManifest(path, b)
		if err != nil {
			return
		}
		for name, tb := range m.Tables {
			if tb != nil && tb.Dir != "" && !slices.Contains(dirs, tb.Dir) {
				t.Fatalf("table %s's directory %q is not among those gc keeps: %q", name, tb.Dir, dirs)
			}
		}
	})
}
