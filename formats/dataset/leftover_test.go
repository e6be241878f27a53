package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestClaimLeftover: a whole spool is a leftover another run may take
// only once the run that spooled it lets it go (it holds it from its
// creation to its commit: after the rename too), and only one run at a
// time takes it; a spool removed meanwhile is no leftover.
func TestClaimLeftover(t *testing.T) {
	stream, _ := arrowBatches(t, 2)
	for _, tt := range []struct {
		name  string
		spool func(t *testing.T, dir string) (path string, release func())
	}{
		{"SpoolHeld", func(t *testing.T, dir string) (string, func()) {
			p, release, err := SpoolHeld(dir, ".results", bytes.NewReader(stream))
			if err != nil {
				t.Fatal(err)
			}
			return p, release
		}},
		{"StartSpool", func(t *testing.T, dir string) (string, func()) {
			s, err := StartSpool(dir, ".spool", bytes.NewReader(stream), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			return s.Path(), func() { s.Close() }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, owner := tt.spool(t, t.TempDir())
			if _, ok, err := ClaimLeftover(path); ok || err != nil {
				t.Fatalf("claimed a whole spool its run still holds (%v)", err)
			}
			owner()
			release, ok, err := ClaimLeftover(path)
			if !ok || err != nil {
				t.Fatalf("could not claim a spool its run let go: %v", err)
			}
			if _, ok, err := ClaimLeftover(path); ok || err != nil {
				t.Fatalf("claimed a leftover another run holds (%v)", err)
			}
			os.Remove(path) // applied
			release()
			if _, ok, err := ClaimLeftover(path); ok || err != nil {
				t.Fatalf("claimed a leftover that was removed (%v)", err)
			}
		})
	}
}

// TestIsSpool: only a regular file named as a run names its spools
// (NewName) is one; what else an inbox may hold is not.
func TestIsSpool(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  bool
		want bool
	}{
		{NewName(".spool"), false, true},
		{"part-1.spool", false, true},
		{"part-.spool", false, false},
		{"part-1.spool", true, false}, // a folder
		{"part-1.spool.bad", false, false},
		{"part-1.spool.cut.bad", false, false},
		{PartialPrefix + NewName(".txt"), false, false},
		{".tmp-part-1.spool-x", false, false},
		{"CURRENT", false, false},
		{"LOCK", false, false},
		{"policy.json", false, false},
		{"input-cache", false, false},
		{"notes.spool", false, false},
		{"part-1.results", false, false}, // merge's
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := t.TempDir()
			p := filepath.Join(sub, c.name)
			var err error
			if c.dir {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(sub)
			if err != nil || len(ents) != 1 {
				t.Fatal(ents, err)
			}
			if got := IsSpool(ents[0], ".spool"); got != c.want {
				t.Fatalf("IsSpool(%s) = %v, want %v", c.name, got, c.want)
			}
		})
	}
}
