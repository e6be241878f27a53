package dataset

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// TestEndedWhole: a run stopped while its spool is being committed
// (renamed to its final name, not yet seen done by Wait) gets its
// context's error from Wait, but EndedWhole, once Stop has returned, says
// the spool is whole at Path; one stopped while its input was still
// coming says it is not (what was written is Salvage's).
func TestEndedWhole(t *testing.T) {
	input := []byte("0123456789abcdef0123456789abcdef01234567\n")
	for _, tt := range []struct {
		name  string
		whole bool // the input ends before the stop
	}{
		{"stopped while committing", true},
		{"stopped while reading", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			committing := make(chan struct{})
			resume := make(chan struct{})
			spoolCommitted = func() {
				close(committing)
				<-resume
			}
			defer func() { spoolCommitted = func() {} }()
			dir := t.TempDir()
			pr, pw := io.Pipe()
			s, err := StartSpool(dir, ".spool", pr, nil)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				pw.Write(input)
				if tt.whole {
					pw.Close()
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			if tt.whole {
				select {
				case <-committing: // renamed to Path, not yet done
				case <-time.After(time.Minute):
					t.Fatal("the copy never committed")
				}
				if _, err := os.Stat(s.Path()); err != nil {
					t.Fatalf("committing, yet not at its final name: %v", err)
				}
			} else {
				r := s.NewReader(context.Background())
				if _, err := io.ReadFull(r, make([]byte, len(input))); err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			if err := s.Wait(ctx); err != context.Canceled {
				t.Fatalf("Wait = %v, want the context's error", err)
			}
			if tt.whole {
				close(resume)
			}
			s.Stop(time.Minute)
			if !tt.whole {
				pw.Close()
			}
			if got := s.EndedWhole(); got != tt.whole {
				t.Fatalf("EndedWhole = %v, want %v", got, tt.whole)
			}
			if tt.whole {
				b, err := os.ReadFile(s.Path())
				if err != nil || !bytes.Equal(b, input) {
					t.Fatalf("the spool at %s: %q, %v; want the whole input", s.Path(), b, err)
				}
			}
		})
	}
}
