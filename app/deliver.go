package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/interrupt"
)

// replaceFlag lets capture, fetch and export write over an existing -o
// FILE (plan-retries has its own, which also ends the leases FILE holds).
var replaceFlag = &cli.BoolFlag{Name: "replace", Usage: "write over an existing -o FILE (without it, an existing FILE is refused: exit 2)"}

// checkNotReplacing refuses -o FILE when FILE is an existing regular file
// (through symbolic links) and --replace is not given: a re-run into the
// same file must not silently replace what an earlier run wrote, before
// it was applied. -o -, and a FIFO or device written in place, are not
// replaced and pass.
func checkNotReplacing(c *cli.Context) error {
	out := c.String("output")
	if out == "" || out == "-" || c.Bool("replace") || fsutil.WrittenInPlace(out) {
		return nil
	}
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return exitcode.BadInput(fmt.Errorf("%s: -o %s exists: give --replace to write over it", c.Command.Name, out))
}

// errUndelivered marks the error of a run that deliver gave up on: its
// data could not all be written to stdout, and the run is still blocked.
var errUndelivered = errors.New("the output could not be delivered")

// stallChunk bounds one write to stdout, so that a reader that takes the
// data slowly but steadily is seen making progress within every grace.
const stallChunk = 64 << 10

// stallWatch is the output of a command that deliver watches: stdout as
// it sees it with -o -, and the opener of -o FILE, when FILE is written
// in place (a FIFO, device or /dev/stdout). It notes when the open or
// write under way began, so that deliver can tell a reader that takes
// nothing, or a FIFO that no reader opens.
type stallWatch struct {
	w       io.Writer
	pending atomic.Int64                // UnixNano at which the write to w under way began; 0: none
	opening atomic.Int64                // UnixNano at which the open under way began; 0: none
	file    atomic.Pointer[fsutil.File] // what open opened last
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

// Unwrap returns the writer s watches, so that fsutil.ReaderGone can
// look at stdout through it.
func (s *stallWatch) Unwrap() io.Writer { return s.w }

// open is fsutil.CreateOutput (an fsutil.Opener), noting the open under
// way: a FIFO blocks it until a reader opens the FIFO. The file notes its
// own writes (fsutil.File.BlockedSince).
func (s *stallWatch) open(path string) (*fsutil.File, error) {
	s.opening.Store(time.Now().UnixNano())
	f, err := fsutil.CreateOutput(path)
	s.opening.Store(0)
	if err == nil {
		s.file.Store(f)
	}
	return f, err
}

// blockedSince returns when the open or write under way began (zero:
// none), and whether it is an open.
func (s *stallWatch) blockedSince() (time.Time, bool) {
	if ns := s.opening.Load(); ns != 0 {
		return time.Unix(0, ns), true
	}
	if ns := s.pending.Load(); ns != 0 {
		return time.Unix(0, ns), false
	}
	if f := s.file.Load(); f != nil {
		return f.BlockedSince(), false
	}
	return time.Time{}, false
}

// output is where a run under deliver writes its data: stdout for -o -,
// and open, which opens -o FILE (a stage's OpenOutput).
type output struct {
	stdout io.Writer
	open   fsutil.Opener
}

// deliver runs run, a command that writes its data to the output it is
// given, and returns run's error. When out is "-" or names a FIFO, a
// device or /dev/stdout (fsutil.WrittenInPlace), deliver watches the
// output; for a regular file it only waits for run.
//
// A reader that stops reading ("capture -o - | sleep 600"), or a FIFO
// that no reader opens, blocks run in a write or in open(2) for good,
// which no signal ends. So once parent is cancelled (the first SIGINT or
// SIGTERM, which stops run), run has until an open or write has been
// blocked for streamGrace since the signal to finish; a second signal,
// or such a block, makes deliver return at once an error that wraps
// errUndelivered (exit 130), leaving run blocked. The process exits with
// it and the reader finds the stream cut short. The first time deliver
// finds the output blocked after the stop it says so on stderr, and that
// the next signal stops it now.
//
// Signals are counted (interrupt.From(parent)), not guessed by time: the
// second signal is any that comes after the one that cancelled parent and
// after deliver began, however soon (a second signal that came before
// deliver began, when a report is written after the run, asked to stop
// the run, not the report). When parent was cancelled by something else
// (a deadline: no signal stopped run), the first signal that comes after
// deliver began ends the wait the same way ("stopped by a signal"): it
// is the user's first word, and there is nothing else for it to stop.
func deliver(parent context.Context, cmd, out string, stdout io.Writer, run func(output) error) error {
	if (out != "-" && !fsutil.WrittenInPlace(out)) || (out == "-" && regularFile(stdout)) {
		// A regular file (-o FILE, or stdout redirected to one: -o - >
		// FILE) takes every write: nothing to watch.
		return run(output{stdout: stdout, open: fsutil.CreateOutput})
	}
	seen := 0 // signals before deliver began
	if sigs := interrupt.From(parent); sigs != nil {
		seen = sigs.Count()
	}
	w := &stallWatch{w: stdout}
	done := make(chan error, 1)
	go func() { done <- run(output{stdout: w, open: w.open}) }()
	select {
	case err := <-done:
		return err
	case <-parent.Done():
	}
	signalled := time.Now()
	again, stopAgain, second := laterSignal(parent, seen)
	defer stopAgain()
	by, stopNow := "a signal", "interrupt to stop now"
	if second {
		by, stopNow = "a second signal", "interrupt again to stop now"
	}
	where := out
	if out == "-" {
		where = "stdout"
	}
	warned := false
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-again:
			if _, opening := w.blockedSince(); opening {
				return undelivered(cmd, fmt.Sprintf("stopped by %s while no reader had opened %s (nothing was written to it)", by, where))
			}
			return undelivered(cmd, fmt.Sprintf("stopped by %s before it was all written (the stream on %s is cut short)", by, where))
		case now := <-tick.C:
			since, opening := w.blockedSince()
			if since.IsZero() {
				continue
			}
			if !warned {
				warned = true
				if opening {
					slog.Warn(fmt.Sprintf("%s: interrupted; waiting for a reader to open %s, for up to %s (%s)", cmd, where, streamGrace, stopNow))
				} else {
					slog.Warn(fmt.Sprintf("%s: interrupted; waiting for %s's reader to take the rest, for up to %s without progress (%s)", cmd, where, streamGrace, stopNow))
				}
			}
			if since.Before(signalled) {
				since = signalled
			}
			if now.Sub(since) < streamGrace {
				continue
			}
			if opening {
				return undelivered(cmd, fmt.Sprintf("no reader opened %s for %s (nothing was written to it)", where, streamGrace))
			}
			return undelivered(cmd, fmt.Sprintf("%s's reader took nothing for %s (the stream on %s is cut short)", where, streamGrace, where))
		}
	}
}

// deliverRun is deliver for a run that returns counters: the run's, or
// zero when deliver gave up on it (the error wraps errUndelivered; the
// run, still blocked, is never read from again).
func deliverRun[S any](parent context.Context, cmd, out string, stdout io.Writer, run func(output) (S, error)) (S, error) {
	var st S
	err := deliver(parent, cmd, out, stdout, func(dst output) error {
		var err error
		st, err = run(dst)
		return err
	})
	if errors.Is(err, errUndelivered) {
		var zero S
		return zero, err
	}
	return st, err
}

// laterSignal returns, for parent once it is done, a channel that is
// ready once a signal comes that counts as a stop after parent's: after
// the one that cancelled parent, if a signal did (second: that one is
// then a second signal), and after the seen signals counted before the
// caller began. With no interrupt.Counter in parent, nil: no signal is
// seen. The caller calls stop once it no longer waits on again (deferred):
// the Counter, which lives as long as the process, then forgets it.
func laterSignal(parent context.Context, seen int) (again <-chan struct{}, stop func(), second bool) {
	sigs := interrupt.From(parent)
	if sigs == nil {
		return nil, func() {}, false
	}
	if s := interrupt.Cause(parent); s != nil {
		again, stop = sigs.After(max(seen, s.N))
		return again, stop, true
	}
	again, stop = sigs.After(seen)
	return again, stop, false
}

// undelivered is deliver's error when it gives up on run: exit 130.
func undelivered(cmd, why string) error {
	return exitcode.With(exitcode.Interrupted, fmt.Errorf("%s: interrupted; %w: %s", cmd, errUndelivered, why))
}

// saveBound bounds how long a run that deliver gave up on may take to
// save its DHT state before the process exits.
const saveBound = 5 * time.Second

// stateSaver holds what a stage hands over to save its DHT state at once
// (fetch's and capture's Options.StateSaver): the routing table does not
// depend on the output, and must not be lost with a run that deliver
// gives up on.
type stateSaver struct{ save atomic.Pointer[func()] }

// set is the stage's Options.StateSaver.
func (s *stateSaver) set(save func()) { s.save.Store(&save) }

// run saves the state, if the stage handed a way to, waiting for it at
// most saveBound.
func (s *stateSaver) run(cmd string) {
	save := s.save.Load()
	if save == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		(*save)()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(saveBound):
		slog.Warn(fmt.Sprintf("%s: the DHT state was not saved within %s; exiting without it", cmd, saveBound))
	}
}

// regularFile reports whether w is (or wraps: fsutil.FileOf) an *os.File
// open on a regular file (-o FILE.arrows --replace's stream wraps one).
func regularFile(w io.Writer) bool {
	f := fsutil.FileOf(w)
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}
