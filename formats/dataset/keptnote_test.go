package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestKeptWhole: KeptNote's error says which streams wait whole in the
// inbox (those whose spool is still at its final path), keeps its text,
// and still wraps the run's error; KeptWhole finds a stream's spool by
// the name the user gave it.
func TestKeptWhole(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "part-1.spool")
	if err := os.WriteFile(whole, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "part-2.spool") // stopped: never got its final name
	for _, tc := range []struct {
		name      string
		err       error
		spools    []SpooledInput
		wantStdin string // KeptWhole(err, "stdin")
		wantText  string
	}{
		{"whole", context.Canceled, []SpooledInput{{"stdin", whole}}, whole,
			"context canceled (what stdin sent is kept as " + whole + "; the next dedup applies it)"},
		{"cut short", context.Canceled, []SpooledInput{{"stdin", gone}}, "", "context canceled"},
		{"another stream whole", context.Canceled, []SpooledInput{{"stdin", gone}, {"/tmp/fifo", whole}}, "",
			"context canceled (what /tmp/fifo sent is kept as " + whole + "; the next dedup applies it)"},
		{"no error", nil, []SpooledInput{{"stdin", whole}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := KeptNote(tc.err, "dedup", tc.spools)
			if got := KeptWhole(err, "stdin"); got != tc.wantStdin {
				t.Errorf("KeptWhole = %q, want %q", got, tc.wantStdin)
			}
			if tc.err == nil {
				if err != nil {
					t.Fatalf("KeptNote(nil) = %v", err)
				}
				return
			}
			if err.Error() != tc.wantText || !errors.Is(err, tc.err) {
				t.Errorf("KeptNote = %q (wraps %v: %v), want %q", err, tc.err, errors.Is(err, tc.err), tc.wantText)
			}
		})
	}
}

// TestNothingRead: the mark keeps the error's text and what it wraps,
// and ReadNothing finds it through further wrapping; nil stays nil.
func TestNothingRead(t *testing.T) {
	err := fmt.Errorf("dedup: %w", NothingRead(context.Canceled))
	if !ReadNothing(err) || !errors.Is(err, context.Canceled) || err.Error() != "dedup: context canceled" {
		t.Fatalf("err %v: ReadNothing %v, Is(Canceled) %v", err, ReadNothing(err), errors.Is(err, context.Canceled))
	}
	if ReadNothing(context.Canceled) || NothingRead(nil) != nil {
		t.Fatal("an unmarked error is marked, or nil is not nil")
	}
}

// TestCutUnreadable: CutUnreadable finds the inbox of the stream named,
// through wrapping, and only that stream's; the error keeps its text.
func TestCutUnreadable(t *testing.T) {
	err := fmt.Errorf("dedup: %w", &UnreadableCut{Err: context.Canceled, From: "stdin", Dir: "DIR/inbox"})
	if CutUnreadable(err, "stdin") != "DIR/inbox" || CutUnreadable(err, "/tmp/fifo") != "" || !errors.Is(err, context.Canceled) ||
		err.Error() != "dedup: context canceled" || CutUnreadable(context.Canceled, "stdin") != "" {
		t.Fatalf("err %v: CutUnreadable(stdin) %q", err, CutUnreadable(err, "stdin"))
	}
}
