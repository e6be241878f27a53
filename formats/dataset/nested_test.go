package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestNested: a folder anywhere below a dataset (its inbox/, a staging
// folder not made yet, a dataset made there by an older version) lies
// inside it however spelt, the outer one named as the path spells it when
// it can be; the dataset itself, a folder beside it and one below a
// folder that only has a CURRENT file do not.
func TestNested(t *testing.T) {
	d := openNew(t)
	root, err := filepath.EvalSymlinks(d.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// One an older version made: what Enclosing tells a dataset by.
	inner := filepath.Join(d.Dir, "export", "old")
	if err := os.MkdirAll(filepath.Join(inner, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "CURRENT"), []byte(manifestName(0)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "CURRENT"), []byte("x\n"), 0o644) // no manifests/: not a dataset
	link := filepath.Join(t.TempDir(), "in")
	if err := os.Symlink(filepath.Join(d.Dir, "inbox"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, want string // want "": not nested
	}{
		{"inbox", filepath.Join(d.Dir, "inbox"), d.Dir},
		{"inbox, slash", filepath.Join(d.Dir, "inbox") + "/", d.Dir},
		{"new staging folder", filepath.Join(d.Dir, "staging", "x"), d.Dir},
		{"dotdot", filepath.Join(d.Dir, "export", "..", "inbox", "y"), d.Dir},
		{"dataset inside", filepath.Join(inner, "inbox"), inner},
		{"old nested dataset", inner, d.Dir},
		{"symbolic link", link, root},
		{"the dataset", d.Dir, ""},
		{"beside it", filepath.Join(filepath.Dir(d.Dir), "new"), ""},
		{"CURRENT alone", filepath.Join(other, "sub"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Nested(c.dir)
			if ok != (c.want != "") || got != c.want {
				t.Fatalf("Nested(%s) = %q, %v; want %q", c.dir, got, ok, c.want)
			}
		})
	}
}

// TestWritersRefuseNested: Open (creating or not), Use and Creatable
// refuse a folder inside a dataset, bad input naming both, and make
// nothing there.
func TestWritersRefuseNested(t *testing.T) {
	d := openNew(t)
	dir := filepath.Join(d.Dir, "inbox", "ds")
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"Open create", func() error { _, err := Open(context.Background(), dir, OpenOptions{Create: true}); return err }},
		{"Open", func() error { _, err := Open(context.Background(), dir, OpenOptions{}); return err }},
		{"Use", func() error { _, err := Use(dir); return err }},
		{"Creatable", func() error { return Creatable(dir) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			var ne *NestedError
			if !errors.As(err, &ne) || ne.Outer != d.Dir || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err %v; want a bad-input NestedError naming %s", err, d.Dir)
			}
			want := "dataset: " + dir + ": inside the dataset " + d.Dir + "; choose a folder outside it"
			if err.Error() != want {
				t.Fatalf("err %q; want %q", err, want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was made (%v)", dir, err)
			}
		})
	}
}

// TestStagingKeepsNestedDataset: a dataset an older version let --data
// make under DIR/staging/ is not a dead writer's debris: opening DIR
// leaves it whole (it was removed), and still removes the debris beside
// it.
func TestStagingKeepsNestedDataset(t *testing.T) {
	d := openNew(t)
	d.Close()
	inner := filepath.Join(d.Dir, "staging", "ds")
	debris := filepath.Join(d.Dir, "staging", "123-dead")
	for _, p := range []string{filepath.Join(inner, "manifests"), filepath.Join(inner, "state"), debris} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(inner, "CURRENT"), []byte(manifestName(0)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{inner, debris} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	d2, err := Open(context.Background(), d.Dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d2.Close()
	if !isDatasetDir(inner) {
		t.Fatalf("the dataset in %s was removed", inner)
	}
	if _, err := os.Stat(debris); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the debris %s was left (%v)", debris, err)
	}
}
