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

// after is c.After(n)'s channel, stopped when the test ends (after the
// signals may have readied it).
func after(t *testing.T, c *Counter, n int) <-chan struct{} {
	t.Helper()
	ch, stop := c.After(n)
	t.Cleanup(stop)
	return ch
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
			before := []<-chan struct{}{after(t, c, 0), after(t, c, 1), after(t, c, 2)}
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
				if got, want := ready(after(t, c, n)), tt.signals > n; got != want {
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
	second, stopSecond := c.After(1)
	defer stopSecond()
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

// TestAfterStop: a caller that stops its channel of After leaves nothing
// held by the Counter, however many times it waits (a process waits once
// per output); stop neither readies the channel nor touches another
// caller's, and may come twice or after the channel is ready. Callers
// that do not stop a channel no signal readied leave one each.
func TestAfterStop(t *testing.T) {
	const calls = 1000
	tests := []struct {
		name    string
		before  int // signals before the calls
		n       int // each call is After(n)
		stops   int // how many times each caller calls stop
		waiting int // channels of the calls the Counter holds after them
	}{
		{name: "stopped, no signal yet", n: 0, stops: 1},
		{name: "stopped twice", n: 1, stops: 2},
		{name: "waiting for a second signal, stopped", before: 1, n: 1, stops: 1},
		{name: "ready at once, stopped", before: 1, n: 0, stops: 1},
		{name: "ready at once, never stopped", before: 1, n: 0},
		{name: "never stopped", n: 0, waiting: calls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, cancel := New(context.Background())
			defer cancel()
			for range tt.before {
				c.Receive(syscall.SIGINT)
			}
			kept := after(t, c, tt.before) // another caller's, ready at the next signal
			for i := range calls {
				ch, stop := c.After(tt.n)
				for range tt.stops {
					stop()
				}
				if got, want := ready(ch), tt.before > tt.n; got != want {
					t.Fatalf("call %d: After(%d) after %d signals and %d stops: ready %v, want %v", i, tt.n, tt.before, tt.stops, got, want)
				}
			}
			if got := c.Waiting(); got != 1+tt.waiting {
				t.Fatalf("the Counter holds %d channels after %d calls, want %d (the kept one and %d)", got, calls, 1+tt.waiting, tt.waiting)
			}
			c.Receive(syscall.SIGINT)
			if !ready(kept) {
				t.Fatal("stopping the calls' channels dropped another caller's: the next signal did not ready it")
			}
		})
	}
}
