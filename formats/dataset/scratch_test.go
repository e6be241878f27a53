package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
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
