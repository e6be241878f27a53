package datasettest

import (
	"encoding/json"
	"os"
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
	here, err := dataset.FolderOf(dst)
	if err != nil {
		t.Fatal(err)
	}
	editCurrent(t, dst, func(m map[string]json.RawMessage) bool {
		if _, ok := m["folder"]; !ok {
			return false // a format before 9: no folder to move
		}
		m["folder"], _ = json.Marshal(here)
		return true
	})
}
