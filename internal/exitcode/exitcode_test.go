package exitcode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
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
