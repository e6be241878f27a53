package interrupt

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// hangBound bounds a wait for what must happen by itself (a signal being
// delivered): no speed goal, only a bound on a hang.
const hangBound = time.Minute

// ready reports whether ch is closed.
func ready(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestCounter: the first signal cancels the context with a *Stop naming
// it (a context.Canceled, as signal.NotifyContext's cause is), each
// signal is counted, however close together they come, and After(n) is
// ready exactly once more than n have come.
func TestCounter(t *testing.T) {
	tests := []struct {
		name    string
		signals int
		cancel  bool // cancel the context before the signals
		stop    bool // want a *Stop cause
	}{
		{name: "no signal", signals: 0},
		{name: "one signal", signals: 1, stop: true},
		{name: "two back to back", signals: 2, stop: true},
		{name: "three back to back", signals: 3, stop: true},
		{name: "cancelled, then a signal", signals: 1, cancel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, c, cancel := New(context.Background())
			defer cancel()
			if From(ctx) != c || From(context.WithoutCancel(ctx)) != c || From(context.Background()) != nil {
				t.Fatal("From does not find the Counter in its context (and only there)")
			}
			before := []<-chan struct{}{c.After(0), c.After(1), c.After(2)}
			if tt.cancel {
				cancel()
			}
			for range tt.signals {
				c.Receive(syscall.SIGINT)
			}
			if got := c.Count(); got != tt.signals {
				t.Fatalf("Count %d, want %d", got, tt.signals)
			}
			for n := range 3 {
				if got, want := ready(before[n]), tt.signals > n; got != want {
					t.Errorf("After(%d) taken before the signals: ready %v, want %v", n, got, want)
				}
				if got, want := ready(c.After(n)), tt.signals > n; got != want {
					t.Errorf("After(%d) taken after the signals: ready %v, want %v", n, got, want)
				}
			}
			stop := Cause(ctx)
			if !tt.stop {
				if stop != nil {
					t.Fatalf("cause %v, want none of a signal's", stop)
				}
				return
			}
			if stop == nil || stop.N != 1 || stop.Signal != syscall.SIGINT || ctx.Err() == nil {
				t.Fatalf("cause %#v (err %v), want the first SIGINT's Stop", stop, ctx.Err())
			}
			if err := context.Cause(ctx); !errors.Is(err, context.Canceled) || err.Error() != "interrupt signal received" {
				t.Fatalf("cause %q is not signal.NotifyContext's (a context.Canceled, \"interrupt signal received\")", err)
			}
		})
	}
}

// TestNotifyContext sends the process real signals (SIGUSR1, which no
// other code here listens to): the first cancels the context, and one
// sent once that was seen is counted as the second.
func TestNotifyContext(t *testing.T) {
	ctx, stop := NotifyContext(context.Background(), syscall.SIGUSR1)
	defer stop()
	c := From(ctx)
	if c == nil {
		t.Fatal("NotifyContext's context holds no Counter")
	}
	second := c.After(1)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(hangBound):
		t.Fatalf("not cancelled %s after SIGUSR1", hangBound)
	}
	if s := Cause(ctx); s == nil || s.Signal != syscall.SIGUSR1 || s.N != 1 {
		t.Fatalf("cause %v, want the first SIGUSR1", context.Cause(ctx))
	}
	if ready(second) {
		t.Fatal("the first signal readied After(1)")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
	case <-time.After(hangBound):
		t.Fatalf("the second SIGUSR1 not counted after %s (count %d)", hangBound, c.Count())
	}
	stop()
	if s := Cause(ctx); s == nil || s.N != 1 {
		t.Fatalf("stop changed the cause to %v", context.Cause(ctx))
	}
}
