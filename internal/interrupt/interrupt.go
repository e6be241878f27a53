// Package interrupt turns SIGINT and SIGTERM into the cancellation of a
// context, as signal.NotifyContext does, and numbers the signals it
// receives. Code that goes on after the stop (a grace for a stream that is
// still being written or read) then tells a later signal from the one that
// stopped the run by its number, rather than by guessing how soon a copy
// of the first one arrives.
package interrupt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"slices"
	"sync"
)

// Stop is the cause (context.Cause) of a context that a signal
// cancelled: the signal, and its number among those the Counter received
// (1 for the first).
type Stop struct {
	Signal os.Signal
	N      int
}

// Error says which signal was received, in signal.NotifyContext's words.
func (s *Stop) Error() string { return s.Signal.String() + " signal received" }

// Is makes a Stop a context.Canceled, as signal.NotifyContext's cause is.
func (s *Stop) Is(target error) bool { return target == context.Canceled }

// Counter numbers the signals received by the holder of a context that
// New or NotifyContext returned, and cancels that context at the first.
type Counter struct {
	mu      sync.Mutex
	n       int
	waiters []waiter
	cancel  context.CancelCauseFunc
}

// waiter is a channel of After, closed once more than n signals came
// (and dropped then, or when its caller stops it).
type waiter struct {
	n  int
	ch chan struct{}
}

// key is the context key under which a context holds its Counter.
type key struct{}

// New returns a copy of parent that the first signal Receive is given
// cancels (its cause a *Stop), holding the Counter it returns (From);
// cancel cancels it (cause context.Canceled), as parent's end does.
func New(parent context.Context) (ctx context.Context, c *Counter, cancel context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(parent)
	c = &Counter{cancel: cancelCause}
	return context.WithValue(ctx, key{}, c), c, func() { cancelCause(nil) }
}

// NotifyContext is New fed with the signals sigs (SIGINT and SIGTERM) the
// process receives, as signal.NotifyContext: the first cancels ctx, and
// each is counted. stop cancels ctx and stops the counting; a signal
// after it takes its default action again.
func NotifyContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, c, cancel := New(parent)
	// The channel holds a few signals while Receive takes the one before:
	// signal.Notify drops what a full channel cannot take.
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				c.Receive(s)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

// Receive counts sig: the first signal cancels the Counter's context with
// a *Stop; each readies the channels of After it now exceeds.
func (c *Counter) Receive(sig os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == 1 {
		c.cancel(&Stop{Signal: sig, N: 1})
	}
	c.waiters = slices.DeleteFunc(c.waiters, func(w waiter) bool {
		if c.n > w.n {
			close(w.ch)
			return true
		}
		return false
	})
}

// Count is the number of signals received so far.
func (c *Counter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// After returns a channel that is closed once more than n signals have
// been received (at once if they have), and stop, which the caller calls
// once it no longer waits on the channel: the Counter then forgets it.
// Until a signal readies it, a channel that is not stopped stays held by
// the Counter, which lives as long as its context: a process that waits
// for a later signal once per output would gather one per output. stop
// may be called any number of times, before or after the channel is
// ready; it never closes the channel.
func (c *Counter) After(n int) (ready <-chan struct{}, stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if c.n > n {
		close(ch)
		return ch, func() {}
	}
	c.waiters = append(c.waiters, waiter{n: n, ch: ch})
	return ch, func() { c.drop(ch) }
}

// drop forgets the waiter of ch, if the Counter still holds it.
func (c *Counter) drop(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiters = slices.DeleteFunc(c.waiters, func(w waiter) bool { return w.ch == ch })
}

// Waiting is the number of channels of After the Counter holds: neither
// ready nor stopped.
func (c *Counter) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// From returns the Counter that ctx (or a context it derives from) holds,
// or nil if it holds none.
func From(ctx context.Context) *Counter {
	c, _ := ctx.Value(key{}).(*Counter)
	return c
}

// Cause returns the *Stop that ended ctx (through context.Cause: ctx, or
// the context it derives from that a signal cancelled), or nil when ctx
// is not done or something else ended it (a deadline, a cancel).
func Cause(ctx context.Context) *Stop {
	var s *Stop
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}
