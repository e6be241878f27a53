package datasettest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SetDatasetID rewrites the current manifest of dir to name the dataset
// id (16 lowercase hex digits), as if drawn so: tests that pin the bytes
// of what plan-retries writes (its lease IDs name the dataset) give their
// datasets a fixed one.
func SetDatasetID(t testing.TB, dir, id string) {
	t.Helper()
	editCurrent(t, dir, func(m map[string]json.RawMessage) bool {
		m["dataset_id"], _ = json.Marshal(id)
		return true
	})
}

// editCurrent rewrites the current manifest of the dataset at dir as edit
// changes its fields; where edit returns false, it leaves the file as it
// was.
func editCurrent(t testing.TB, dir string, edit func(m map[string]json.RawMessage) bool) {
	t.Helper()
	cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "manifests", strings.TrimSpace(string(cur)))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if !edit(m) {
		return
	}
	if b, err = json.MarshalIndent(m, "", " "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// SetFormatVersion rewrites the current manifest of dir to say format
// version v, as an older binary would have left it: tests of what this
// build does with an older format (its files have every column; formats
// so far only add what an older one lacks).
func SetFormatVersion(t testing.TB, dir string, v int) {
	t.Helper()
	editCurrent(t, dir, func(m map[string]json.RawMessage) bool {
		m["format_version"], _ = json.Marshal(v)
		return true
	})
}
