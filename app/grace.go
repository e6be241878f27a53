package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/interrupt"
)

// streamGrace is how long dedup and merge go on after SIGINT or SIGTERM
// when an input is a stream. In "capture -o - | dedup -" (or "fetch -o - |
// merge -") Ctrl-C reaches both: the writer upstream then flushes what it
// has and closes the pipe, and the reader applies it, so that its
// "commits what was received" holds for the pipeline too. A second
// signal, or the end of the grace, stops at once as before.
var streamGrace = 10 * time.Second

// streamInput reports whether an input argument is read only once: "-"
// (stdin) or a pipe, FIFO or device.
func streamInput(arg string) bool {
	if arg == "-" {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && fsutil.ReadOnce(fi.Mode())
}

// graceful is a run context for a command reading streams. It is not
// cancelled by parent's first cancellation (the first signal) but
// streamGrace later, or at a second signal, counted as deliver counts it
// (laterSignal): any signal after the one that cancelled parent and after
// withStreamGrace began, however soon it follows; if something other than
// a signal cancelled parent, the first signal after withStreamGrace
// began. interrupted reports whether the first cancellation came before
// done, which must be called when the run returns: from then on
// interrupted no longer changes. watched is closed once the goroutine
// watching parent has returned, which it does at done at the latest
// (tests wait for it).
type graceful struct {
	ctx         context.Context
	interrupted func() bool
	done        func()
	watched     <-chan struct{}
}

// withStreamGrace returns parent unchanged (and a no-op) unless some of
// args are streams.
func withStreamGrace(parent context.Context, cmd string, args []string) graceful {
	streams := false
	for _, a := range args {
		streams = streams || streamInput(a)
	}
	if !streams {
		none := make(chan struct{})
		close(none) // no goroutine
		return graceful{ctx: parent, interrupted: func() bool { return false }, done: func() {}, watched: none}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	// hit is set under mu, and only while ended is false: when parent
	// and finished are both ready, the goroutine below may pick parent
	// after done has run, and would otherwise turn interrupted from false
	// to true after the caller had read it, or leave it false for a
	// signal that came before done. done settles it instead.
	var hit atomic.Bool
	var mu sync.Mutex
	ended := false
	finished := make(chan struct{})
	seen := 0 // signals before the grace began
	if sigs := interrupt.From(parent); sigs != nil {
		seen = sigs.Count()
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-finished:
			return
		case <-parent.Done():
		}
		mu.Lock()
		late := ended
		if !late {
			hit.Store(true)
		}
		mu.Unlock()
		if late {
			return
		}
		again, stopAgain, _ := laterSignal(parent, seen)
		defer stopAgain()
		slog.Warn(fmt.Sprintf("%s: interrupted; applying what the stream still sends for up to %s (interrupt again to stop now)", cmd, streamGrace))
		t := time.NewTimer(streamGrace)
		defer t.Stop()
		select {
		case <-finished:
		case <-again:
			cancel()
		case <-t.C:
			cancel()
		}
	}()
	var once sync.Once
	return graceful{
		ctx:         ctx,
		watched:     watched,
		interrupted: hit.Load,
		done: func() {
			once.Do(func() {
				mu.Lock()
				ended = true
				if parent.Err() != nil {
					hit.Store(true)
				}
				mu.Unlock()
				close(finished)
				cancel()
			})
		},
	}
}

// interruptedAfter is the error of a run that the first signal
// interrupted but that finished within the grace: exit 130, saying what
// was committed.
func interruptedAfter(cmd string, snapshot int64) error {
	return exitcode.With(exitcode.Interrupted, fmt.Errorf("%s: interrupted; what the stream sent was applied (snapshot %d)", cmd, snapshot))
}

// streamsStopped is the error of a dedup or merge (cmd) reading streams
// (stdin, named pipes or FIFOs: streamArgs) that a second signal, or the
// grace's end, stopped before it committed anything of them (err is the
// run's: a migration Open committed first it names, nothingCommitted),
// saying for each what the next run does with what it sent, which waits
// in the inbox folder inbox of dataset data; or, stopped before it read
// any (dataset.ReadNothing), that nothing of them is kept. Read to its
// end and durable before the stop, a spool waits under its final name
// (dataset.KeptWhole), and the next run applies it as it applies any
// leftover: it used to be said to be set aside. Cut short, it waits under
// its temporary name, and the next run sets its whole batches or lines
// aside as partial-* (dataset.Salvage), which no run applies on its own;
// a Parquet stream cut short cannot be read, and is set aside as bad
// (dataset.UnreadableCut).
func streamsStopped(cmd, data, inbox string, streams []string, err error) error {
	names := strings.Join(streams, ", ")
	if dataset.ReadNothing(err) { // stopped opening data: waiting for its lock to create or migrate it
		return fmt.Errorf("%s: interrupted; %s (stopped while opening %s, before reading %s: nothing was read from %s, so nothing of it is kept; send it again)", cmd, nothingCommitted(err), data, names, names)
	}
	notes := make([]string, len(streams))
	for i, from := range streams {
		notes[i] = streamNote(cmd, inbox, from, err)
	}
	return fmt.Errorf("%s: interrupted; %s (%s)", cmd, nothingCommitted(err), strings.Join(notes, "; "))
}

// streamNote says what became of the stream from (streamsStopped).
func streamNote(cmd, inbox, from string, err error) string {
	if dir := dataset.CutUnreadable(err, from); dir != "" {
		return fmt.Sprintf("%s is a Parquet file, cut short by the stop: what it had sent is kept in %s under a .tmp-* name, "+
			"but cannot be read without the footer at its end and is not applied; the next run sets it aside as .tmp-*.bad, which `infohash status` lists as rejected: send %s again", from, dir, from)
	}
	if p := dataset.KeptWhole(err, from); p != "" {
		return fmt.Sprintf("%s was read to its end and is kept whole as %s: the next %s applies it, with or without arguments, and `infohash status` lists it as pending until then; it need not be sent again", from, p, cmd)
	}
	return fmt.Sprintf("what %s had sent is kept in %s: the next run sets it aside as partial-*, which `infohash status` lists; apply it by name if its writer cannot send it again", from, inbox)
}

// streamArgs are the streams among a run's inputs, as the run names them
// in its errors: "stdin" for "-", a named pipe, FIFO or device by its path.
func streamArgs(inputs []string) []string {
	var out []string
	for _, a := range inputs {
		switch {
		case a == "-":
			out = append(out, "stdin")
		case streamInput(a):
			out = append(out, a)
		}
	}
	return out
}
