package datasettest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
)

// CopyAsMoved copies the dataset at src to dst (a new folder) and makes
// the copy's current manifest name dst as its folder, as if the dataset
// had been moved there rather than copied: tests that copy one built
// dataset for each of their cases run every case on the same dataset (its
// id, its snapshot numbers, its lease IDs), where a copy's first writer
// would give it an id of its own (dataset.Manifest.Folder).
func CopyAsMoved(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	Adopt(t, dst)
}

// Adopt makes the current manifest of the dataset at dir, a copy, name dir
// as its folder: CopyAsMoved's second step, for tests that copy a dataset
// their own way.
func Adopt(t testing.TB, dst string) {
	t.Helper()
	cur, err := os.ReadFile(filepath.Join(dst, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "manifests", strings.TrimSpace(string(cur)))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["folder"]; !ok {
		return // a format before 9: no folder to move
	}
	here, err := dataset.FolderOf(dst)
	if err != nil {
		t.Fatal(err)
	}
	if m["folder"], err = json.Marshal(here); err != nil {
		t.Fatal(err)
	}
	if b, err = json.MarshalIndent(m, "", " "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
