package dataset

import (
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// lockWaitLogEvery is how often a writer that waits for the lock
// (--lock-wait) says it still waits.
var lockWaitLogEvery = 30 * time.Second

// unnamedPolls is how many polls in a row (50ms apart) a waiter lets
// pass without a line while the LOCK file names no holder, before it
// logs held_by="another process". A writer empties the file just before
// it lets go and writes its line just after it takes the lock, so an
// empty file is most often a moment between two writers: a waiter that
// came then logged "another process" for a holder that was about to
// name itself. A holder that never writes one (flock(1)) is still named
// so, 0.5 s later.
const unnamedPolls = 10

// unnamedHolder is what holderOf says of a LOCK file that names no one.
const unnamedHolder = "another process"

// lockWaiter logs a writer's wait for the lock of dir, at info level: a
// line when it starts waiting (who holds the lock: the LOCK file's host,
// PID and start time), one every lockWaitLogEvery while it waits, and
// one when it takes the lock (how long it waited). A writer that takes
// the lock at once logs nothing; one that waits in vain fails with
// ErrLocked, whose message names the holder.
type lockWaiter struct {
	dir         string
	wait        time.Duration // the most it waits
	total       time.Duration // the run's --lock-wait, of which wait is what is left
	start, last time.Time     // zero until it waits, and until it said so
	unnamed     int           // polls since the last line that found no holder named
	try         bool          // a try at once, whose refusal no one reads (tryLock)
}

// waiting notes that the flock of the LOCK file at path would block.
func (w *lockWaiter) waiting(path string) {
	now := time.Now()
	if w.start.IsZero() {
		w.start = now
	}
	if !w.last.IsZero() && now.Sub(w.last) < lockWaitLogEvery {
		return
	}
	held := holderOf(path)
	if held == unnamedHolder && w.unnamed < unnamedPolls {
		w.unnamed++ // perhaps a moment between two writers: look again at the next poll
		return
	}
	w.unnamed = 0
	if w.last.IsZero() {
		w.last = now
		slog.Info("dataset: waiting for the writer lock", w.attrs(held, "lock_wait", w.wait.String())...)
		return
	}
	w.last = now
	slog.Info("dataset: still waiting for the writer lock", w.attrs(held, "waited", now.Sub(w.start).Round(time.Second).String(),
		"lock_wait", w.wait.String())...)
}

// attrs are a wait's log attributes: dir, the holder, then more, and
// the run's whole --lock-wait when the wait is what is left of it.
func (w *lockWaiter) attrs(held string, more ...any) []any {
	a := append([]any{"dir", w.dir, "held_by", held}, more...)
	if w.total > w.wait {
		a = append(a, "lock_wait_total", w.total.String())
	}
	return a
}

// took notes that the writer holds the lock: after a wait it said it
// waited, how long.
func (w *lockWaiter) took() {
	if !w.last.IsZero() {
		slog.Info("dataset: took the writer lock", "dir", w.dir, "waited", time.Since(w.start).Round(time.Millisecond).String())
	}
}

// holderOf is what the LOCK file at path says of its holder: one short
// line of text (fsutil.ReadHolder), whatever the file holds.
func holderOf(path string) string {
	if s := fsutil.ReadHolder(path); s != "" {
		return s
	}
	return unnamedHolder
}
