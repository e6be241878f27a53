package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
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
// it and the reader finds the stream cut short.
func deliver(parent context.Context, cmd, out string, stdout io.Writer, run func(output) error) error {
	if (out != "-" && !fsutil.WrittenInPlace(out)) || (out == "-" && regularFile(stdout)) {
		// A regular file (-o FILE, or stdout redirected to one: -o - >
		// FILE) takes every write: nothing to watch.
		return run(output{stdout: stdout, open: fsutil.CreateOutput})
	}
	// Cancelled already (a report written after the run was stopped):
	// the first signal came before again listened, and is not dropped.
	late := parent.Err() != nil
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	w := &stallWatch{w: stdout}
	done := make(chan error, 1)
	go func() { done <- run(output{stdout: w, open: w.open}) }()
	select {
	case err := <-done:
		return err
	case <-parent.Done():
	}
	signalled := time.Now()
	// The first signal reaches again too, perhaps a moment after it
	// cancelled parent: drop it (as withStreamGrace does).
	if !late {
		select {
		case <-again:
		case <-time.After(100 * time.Millisecond):
		}
	}
	where := out
	if out == "-" {
		where = "stdout"
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-again:
			if _, opening := w.blockedSince(); opening {
				return undelivered(cmd, fmt.Sprintf("stopped by a second signal while no reader had opened %s (nothing was written to it)", where))
			}
			return undelivered(cmd, fmt.Sprintf("stopped by a second signal before it was all written (the stream on %s is cut short)", where))
		case now := <-tick.C:
			since, opening := w.blockedSince()
			if since.IsZero() {
				continue
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
