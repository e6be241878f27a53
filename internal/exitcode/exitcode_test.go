package exitcode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("x"), Error},
		{"bad input", BadInput(errors.New("x")), Usage},
		{"wrapped bad input", fmt.Errorf("dedup: %w", BadInput(errors.New("x"))), Usage},
		{"locked", fmt.Errorf("commit: %w", ErrLocked), Locked},
		{"partial", fmt.Errorf("fetch: %w", ErrPartial), Partial},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), Interrupted},
		{"explicit wins", With(Partial, context.Canceled), Partial},
		{"broken pipe", fmt.Errorf("export: -: %w", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}), BrokenPipe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.err); got != tt.want {
				t.Fatalf("Of(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestHelp: rows keep their order, and a text wraps at 80 columns under
// itself.
func TestHelp(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"short", []Row{{OK, "ok"}, {BrokenPipe, "gone"}}, "EXIT STATUS:\n   0    ok\n   141  gone"},
		{"wrapped", []Row{{Usage, strings.Repeat("word ", 16) + "end…"}},
			"EXIT STATUS:\n   2    " + strings.TrimSpace(strings.Repeat("word ", 14)) + "\n        word word end…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Help(tt.rows...)
			if got != tt.want {
				t.Fatalf("Help:\n%s\nwant:\n%s", got, tt.want)
			}
			for _, line := range strings.Split(got, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth {
					t.Errorf("line of %d columns: %q", n, line)
				}
			}
		})
	}
	for _, r := range Generic {
		if !strings.Contains(Help(Generic...), fmt.Sprintf("\n   %-4d %s", r.Code, strings.Fields(r.Text)[0])) {
			t.Errorf("Help(Generic...) lacks the row of %d", r.Code)
		}
	}
}
