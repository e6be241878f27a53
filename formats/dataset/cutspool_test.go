package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeepCut: a whole spool whose stream was cut mid-message becomes a
// partial input of its whole messages and a file of the cut message,
// which together hold every byte of the stream; nothing else is left. A
// spool whose whole messages are not where the reader found the cut is
// left as it is.
func TestKeepCut(t *testing.T) {
	stream, ends := arrowBatches(t, 3)
	cut := stream[:ends[1]+20]
	for _, tt := range []struct {
		name  string
		whole int64
		ok    bool
	}{
		{"cut after two batches", int64(ends[1]), true},
		{"the reader saw another cut", int64(ends[0]), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			spool := filepath.Join(dir, "part-0a1b.spool")
			if err := os.WriteFile(spool, cut, 0o644); err != nil {
				t.Fatal(err)
			}
			kept, err := KeepCut(spool, ".spool", tt.whole)
			if !tt.ok {
				if err == nil || kept.Partial != "" {
					t.Fatalf("kept %+v, %v; want an error", kept, err)
				}
				if b, _ := os.ReadFile(spool); !bytes.Equal(b, cut) {
					t.Fatal("the spool was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := KeptCut{Partial: filepath.Join(dir, "partial-part-0a1b.arrow"), Tail: spool + CutSuffix, Rest: 20}
			if kept != want {
				t.Fatalf("kept %+v, want %+v", kept, want)
			}
			part, _ := os.ReadFile(kept.Partial)
			tail, _ := os.ReadFile(kept.Tail)
			if !bytes.Equal(part, append(bytes.Clone(stream[:ends[1]]), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)) ||
				!bytes.Equal(append(part[:len(part)-8:len(part)-8], tail...), cut) {
				t.Fatalf("kept %d and %d bytes", len(part), len(tail))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Fatalf("folder holds %v", ents)
			}
		})
	}
}

// TestKeepCutCrash: a crash after KeepCut moved the spool to its
// temporary name, before it became a partial input, leaves what Salvage
// makes a partial input of (not a spool a run would apply on its own).
func TestKeepCutCrash(t *testing.T) {
	stream, ends := arrowBatches(t, 3)
	dir := t.TempDir()
	tmp, _ := cutNames(filepath.Join(dir, "part-0a1b.spool"), ".spool")
	if err := os.WriteFile(tmp, stream[:ends[1]+20], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Salvage(dir, ".spool")
	if err != nil || len(got) != 1 || !strings.HasPrefix(filepath.Base(got[0]), PartialPrefix) {
		t.Fatalf("salvaged %v, %v", got, err)
	}
	if b, _ := os.ReadFile(got[0]); len(b) != ends[1]+8 {
		t.Fatalf("partial input of %d bytes, want %d", len(b), ends[1]+8)
	}
}
