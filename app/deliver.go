package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// errUndelivered marks the error of a run that deliver gave up on: its
// data could not all be written to stdout, and the run is still blocked.
var errUndelivered = errors.New("the output could not be delivered")

// stallChunk bounds one write to stdout, so that a reader that takes the
// data slowly but steadily is seen making progress within every grace.
const stallChunk = 64 << 10

// stallWatch is stdout as a command writing -o - sees it: it notes when
// the write under way began, so that deliver can tell a reader that takes
// nothing.
type stallWatch struct {
	w       io.Writer
	pending atomic.Int64 // UnixNano at which the write under way began; 0: none
}

// Write writes p to the underlying writer, stallChunk bytes at a time.
func (s *stallWatch) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		s.pending.Store(time.Now().UnixNano())
		m, err := s.w.Write(p[n : n+min(len(p)-n, stallChunk)])
		s.pending.Store(0)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// blockedSince returns when the write under way began (zero: none).
func (s *stallWatch) blockedSince() time.Time {
	if ns := s.pending.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// deliver runs run, a command that writes its data to the writer it is
// given, and returns run's error. Unless out is "-", run gets stdout
// itself and deliver only waits for it.
//
// With -o -, a reader that stops reading ("capture -o - | sleep 600")
// blocks run in a write for good, which no signal ends. So once parent
// is cancelled (the first SIGINT or SIGTERM, which stops run), run has
// until a write has been blocked for streamGrace since the signal to
// finish; a second signal, or such a write, makes deliver return at once
// an error that wraps errUndelivered (exit 130), leaving run blocked. The
// process exits with it and the reader finds the stream cut short.
func deliver(parent context.Context, cmd, out string, stdout io.Writer, run func(stdout io.Writer) error) error {
	if out != "-" {
		return run(stdout)
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	w := &stallWatch{w: stdout}
	done := make(chan error, 1)
	go func() { done <- run(w) }()
	select {
	case err := <-done:
		return err
	case <-parent.Done():
	}
	signalled := time.Now()
	// The first signal reaches again too, perhaps a moment after it
	// cancelled parent: drop it (as withStreamGrace does).
	select {
	case <-again:
	case <-time.After(100 * time.Millisecond):
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-again:
			return undelivered(cmd, "stopped by a second signal before it was all written")
		case now := <-tick.C:
			since := w.blockedSince()
			if since.IsZero() {
				continue
			}
			if since.Before(signalled) {
				since = signalled
			}
			if now.Sub(since) >= streamGrace {
				return undelivered(cmd, fmt.Sprintf("stdout's reader took nothing for %s", streamGrace))
			}
		}
	}
}

// deliverRun is deliver for a run that returns counters: the run's, or
// zero when deliver gave up on it (the error wraps errUndelivered; the
// run, still blocked, is never read from again).
func deliverRun[S any](parent context.Context, cmd, out string, stdout io.Writer, run func(stdout io.Writer) (S, error)) (S, error) {
	var st S
	err := deliver(parent, cmd, out, stdout, func(w io.Writer) error {
		var err error
		st, err = run(w)
		return err
	})
	if errors.Is(err, errUndelivered) {
		var zero S
		return zero, err
	}
	return st, err
}

// undelivered is deliver's error when it gives up on run: exit 130.
func undelivered(cmd, why string) error {
	return exitcode.With(exitcode.Interrupted,
		fmt.Errorf("%s: interrupted; %w: %s (the stream on stdout is cut short)", cmd, errUndelivered, why))
}
