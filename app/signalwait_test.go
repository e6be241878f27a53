package app

import (
	"io"
	"testing"
	"time"
)

// TestLaterSignalWaitsAreDropped: deliver and the stream grace each wait
// for a later signal once they are stopped (laterSignal), and a process
// goes through them once per output. Each must drop its wait when it
// returns: the interrupt.Counter lives as long as the process, and held
// one channel for every deliver or grace that ended without a later
// signal. Each round waits until the wait is taken (the Counter holds
// one) and ends the run; once deliver has returned, or the grace's
// goroutine, the Counter must hold none.
func TestLaterSignalWaitsAreDropped(t *testing.T) {
	const rounds = 50
	tests := []struct {
		name     string
		grace    bool // withStreamGrace, else deliver
		deadline bool // a deadline stopped the run, else a signal
	}{
		{name: "deliver, stopped by a signal"},
		{name: "deliver, stopped by a deadline", deadline: true},
		{name: "stream grace, stopped by a signal", grace: true},
		{name: "stream grace, stopped by a deadline", grace: true, deadline: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := 1
			if tt.deadline {
				before = 0
			}
			parent, sigs := stoppedParent(t, before, tt.deadline)
			for i := range rounds {
				taken := func() bool { return sigs.Waiting() == 1 }
				if tt.grace {
					g := withStreamGrace(parent, "test", []string{"-"})
					waitFor(t, "the grace to wait for a later signal", taken)
					g.done()
					select {
					case <-g.watched:
					case <-time.After(hangGuard):
						t.Fatalf("round %d: the grace goroutine has not returned %s after done", i, hangGuard)
					}
				} else {
					release := make(chan struct{})
					done := make(chan error, 1)
					go func() {
						done <- deliver(parent, "test", "-", io.Discard, func(output) error { <-release; return nil })
					}()
					waitFor(t, "deliver to wait for a later signal", taken)
					close(release)
					select {
					case err := <-done:
						if err != nil {
							t.Fatalf("round %d: deliver: %v", i, err)
						}
					case <-time.After(hangGuard):
						t.Fatalf("round %d: deliver has not returned %s after its run did", i, hangGuard)
					}
				}
				if n := sigs.Waiting(); n != 0 {
					t.Fatalf("round %d: the Counter still holds %d waits for a later signal after the run ended", i, n)
				}
			}
		})
	}
}
