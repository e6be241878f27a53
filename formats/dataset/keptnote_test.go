package dataset

import (
	"context"
	"errors"
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
