package dataset

import (
	"log/slog"
	"time"

	"github.com/infohash/infohash/formats/fsutil"
)

// lockWaitLogEvery is how often a writer that waits for the lock
// (--lock-wait) says it still waits.
var lockWaitLogEvery = 30 * time.Second

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
	start, last time.Time     // zero until it waits
}

// waiting notes that the flock of the LOCK file at path would block.
func (w *lockWaiter) waiting(path string) {
	now := time.Now()
	switch {
	case w.start.IsZero():
		w.start, w.last = now, now
		slog.Info("dataset: waiting for the writer lock", w.attrs(path, "lock_wait", w.wait.String())...)
	case now.Sub(w.last) >= lockWaitLogEvery:
		w.last = now
		slog.Info("dataset: still waiting for the writer lock", w.attrs(path, "waited", now.Sub(w.start).Round(time.Second).String(),
			"lock_wait", w.wait.String())...)
	}
}

// attrs are a wait's log attributes: dir, the holder, then more, and
// the run's whole --lock-wait when the wait is what is left of it.
func (w *lockWaiter) attrs(path string, more ...any) []any {
	a := append([]any{"dir", w.dir, "held_by", holderOf(path)}, more...)
	if w.total > w.wait {
		a = append(a, "lock_wait_total", w.total.String())
	}
	return a
}

// took notes that the writer holds the lock.
func (w *lockWaiter) took() {
	if !w.start.IsZero() {
		slog.Info("dataset: took the writer lock", "dir", w.dir, "waited", time.Since(w.start).Round(time.Millisecond).String())
	}
}

// holderOf is what the LOCK file at path says of its holder: one short
// line of text (fsutil.ReadHolder), whatever the file holds.
func holderOf(path string) string {
	if s := fsutil.ReadHolder(path); s != "" {
		return s
	}
	return "another process"
}
