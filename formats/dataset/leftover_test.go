package dataset

import (
	"bytes"
	"context"
	"os"
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
