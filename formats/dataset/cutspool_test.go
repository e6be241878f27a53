package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeepCut: a whole spool cut short becomes a partial input of its
// whole messages (an Arrow stream cut mid-message, or ended without its
// end-of-stream marker) or lines (a text list whose last line is cut)
// and a file of the cut message or line, if any, which together hold
// every byte of the stream; nothing else is left. A spool whose whole
// messages or lines are not where the reader found the cut is left as
// it is.
func TestKeepCut(t *testing.T) {
	stream, ends := arrowBatches(t, 3)
	eos := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	list := []byte("# hashes\n" + strings.Repeat("0123456789abcdef0123456789abcdef01234567\n", 3) + "0123456789abc")
	wholeLines := int64(bytes.LastIndexByte(list, '\n') + 1)
	for _, tt := range []struct {
		name  string
		in    []byte
		whole int64
		ok    bool
		ext   string // the partial input's
		part  []byte // what it holds
	}{
		{"cut after two batches", stream[:ends[1]+20], int64(ends[1]), true, ".arrow", append(bytes.Clone(stream[:ends[1]]), eos...)},
		{"no end marker after two batches", stream[:ends[1]], int64(ends[1]), true, ".arrow", append(bytes.Clone(stream[:ends[1]]), eos...)},
		{"a text list's last line cut", list, wholeLines, true, ".txt", list[:wholeLines]},
		{"the reader saw another cut", stream[:ends[1]+20], int64(ends[0]), false, "", nil},
		{"the whole stream with its marker", stream, int64(len(stream)), false, "", nil},
		{"the reader saw another line cut", list, wholeLines - 3, false, "", nil},
		{"a text list that ends with a newline", list[:wholeLines], wholeLines, false, "", nil},
		{"a text list without a whole line", list[wholeLines:], 0, false, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			spool := filepath.Join(dir, "part-0a1b.spool")
			if err := os.WriteFile(spool, tt.in, 0o644); err != nil {
				t.Fatal(err)
			}
			kept, err := KeepCut(spool, ".spool", tt.whole)
			if !tt.ok {
				if err == nil || kept.Partial != "" {
					t.Fatalf("kept %+v, %v; want an error", kept, err)
				}
				if b, _ := os.ReadFile(spool); !bytes.Equal(b, tt.in) {
					t.Fatal("the spool was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := KeptCut{Partial: filepath.Join(dir, "partial-part-0a1b"+tt.ext), Rest: int64(len(tt.in)) - tt.whole}
			if want.Rest > 0 {
				want.Tail = spool + CutSuffix
			}
			if kept != want {
				t.Fatalf("kept %+v, want %+v", kept, want)
			}
			part, _ := os.ReadFile(kept.Partial)
			var tail []byte
			files := 1
			if kept.Tail != "" {
				tail, _ = os.ReadFile(kept.Tail)
				files++
			}
			if !bytes.Equal(part, tt.part) || !bytes.Equal(append(bytes.Clone(part[:tt.whole]), tail...), tt.in) {
				t.Fatalf("kept %d and %d bytes", len(part), len(tail))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != files {
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
	tmp, _ := cutNames(filepath.Join(dir, "part-0a1b.spool"), ".spool", ".arrow")
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
