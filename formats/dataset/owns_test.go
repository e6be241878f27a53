package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwns: the files the dataset manages are owned however spelt; the
// rest of the directory and anything outside it are not.
func TestOwns(t *testing.T) {
	d := openNew(t)
	out := t.TempDir()
	for _, l := range [][2]string{
		{filepath.Join(out, "cur"), filepath.Join(d.Dir, "CURRENT")},
		{filepath.Join(out, "ds"), d.Dir},
		{filepath.Join(out, "ahead"), filepath.Join(d.Dir, "ledger", "new.parquet")},
		{filepath.Join(out, "mine"), filepath.Join(d.Dir, "export", "x.csv")},
	} {
		if err := os.Symlink(l[1], l[0]); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(d.Dir, "export"), 0o755)
	for _, c := range []struct {
		path string
		rel  string // "" when not owned
	}{
		{filepath.Join(d.Dir, "CURRENT"), "CURRENT"},
		{filepath.Join(d.Dir, "policy.json"), "policy.json"},
		{filepath.Join(d.Dir, "input-cache"), "input-cache"},
		{filepath.Join(d.Dir, "export", "..", "LOCK"), "LOCK"},
		{filepath.Join(d.Dir, "manifests", "000000000000.json"), filepath.Join("manifests", "000000000000.json")},
		{filepath.Join(d.Dir, "state", "v", "x", "y.parquet"), filepath.Join("state", "v", "x", "y.parquet")},
		{filepath.Join(d.Dir, "dht-state", "dht-state.json"), filepath.Join("dht-state", "dht-state.json")},
		{filepath.Join(d.Dir, ".tmp-policy.json-1"), ".tmp-policy.json-1"},
		{d.Dir, "."},
		{filepath.Join(out, "cur"), "CURRENT"},
		{filepath.Join(out, "ds", "inbox", "a.tsv"), filepath.Join("inbox", "a.tsv")},
		{filepath.Join(out, "ahead"), filepath.Join("ledger", "new.parquet")},
		{filepath.Join(d.Dir, "export", "x.csv"), ""},
		{filepath.Join(d.Dir, "notes.txt"), ""},
		{filepath.Join(out, "mine"), ""},
		{filepath.Join(out, "CURRENT"), ""},
		{filepath.Join(d.Dir, "..", "CURRENT"), ""},
	} {
		rel, ok := Owns(d.Dir, c.path)
		if ok != (c.rel != "") || (ok && rel != c.rel) {
			t.Errorf("Owns(%s) = %q, %v; want %q", c.path, rel, ok, c.rel)
		}
	}
}

// TestEnclosing finds the dataset a path lies in, however deep, and none
// for paths outside any dataset.
func TestEnclosing(t *testing.T) {
	d := openNew(t)
	root, err := filepath.EvalSymlinks(d.Dir)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "CURRENT"), []byte("x\n"), 0o644) // no manifests/: not a dataset
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(d.Dir, "CURRENT"), root},
		{d.Dir, root},
		{filepath.Join(d.Dir, "state", "v", "new", "x.parquet"), root},
		{filepath.Join(d.Dir, "export", "a.csv"), root},
		{filepath.Join(other, "CURRENT"), ""},
		{filepath.Join(other, "sub", "f"), ""},
	} {
		got, ok := Enclosing(c.path)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("Enclosing(%s) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
}
