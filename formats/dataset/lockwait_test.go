package dataset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// records is a slog handler that keeps each record as "msg key=value
// ...", and calls then(line) with it.
type records struct {
	mu    sync.Mutex
	lines []string
	then  func(line string)
}

func (c *records) Enabled(context.Context, slog.Level) bool { return true }
func (c *records) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *records) WithGroup(string) slog.Handler            { return c }
func (c *records) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%s", a.Key, a.Value)
		return true
	})
	c.mu.Lock()
	c.lines = append(c.lines, line)
	then := c.then
	c.mu.Unlock()
	if then != nil {
		then(line)
	}
	return nil
}

// take returns the lines kept so far, and forgets them.
func (c *records) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := c.lines
	c.lines = nil
	return lines
}

// find is the first of lines that begins with msg, or "".
func find(lines []string, msg string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, msg+" ") {
			return l
		}
	}
	return ""
}

// TestLockWaitLogs: a writer that waits for the lock (--lock-wait) logs
// when it starts waiting, naming the holder (host and PID from LOCK),
// while it waits, and when it takes the lock, how long it waited. One
// that may not wait logs nothing, and its ErrLocked names the holder.
func TestLockWaitLogs(t *testing.T) {
	logs := &records{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(logs))
	defer func(was time.Duration) { lockWaitLogEvery = was }(lockWaitLogEvery)
	lockWaitLogEvery = 0 // a line at every poll: no test waits 30 s
	host, _ := os.Hostname()
	holder := fmt.Sprintf("host=%s pid=%d since=", host, os.Getpid())
	ctx := context.Background()
	dir := t.TempDir()
	held, err := acquireLock(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { held.Release() }()

	// Without a wait: ErrLocked at once, naming the holder, no log.
	if _, err := acquireLock(ctx, dir, 0); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "(held by "+holder) {
		t.Fatalf("acquireLock with no wait: %v; want ErrLocked held by %s...", err, holder)
	}
	if lines := logs.take(); len(lines) != 0 {
		t.Fatalf("a writer that may not wait logged %q", lines)
	}

	// A wait given up (interrupted) once it began: it said it waited,
	// and for whom, and took nothing.
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	logs.then = func(line string) {
		if strings.HasPrefix(line, "dataset: waiting for the writer lock ") {
			cancel()
		}
	}
	if _, err := acquireLock(stop, dir, 30*time.Second); !errors.Is(err, context.Canceled) { // canceled well before
		t.Fatalf("acquireLock, interrupted while waiting: %v (logged %q)", err, logs.take())
	}
	lines := logs.take()
	if line := find(lines, "dataset: waiting for the writer lock"); !strings.Contains(line, " held_by="+holder) ||
		!strings.Contains(line, " dir="+dir+" ") || !strings.Contains(line, " lock_wait=30s") {
		t.Fatalf("the first line of a wait: %q; want dir, holder %q and lock_wait in %q", line, holder, lines)
	}
	if line := find(lines, "dataset: took the writer lock"); line != "" {
		t.Fatalf("an interrupted wait logged %q", line)
	}

	// The holder lets go once the waiter said it still waits: it took
	// the lock, and says how long it waited.
	logs.then = func(line string) {
		if strings.HasPrefix(line, "dataset: still waiting for the writer lock ") {
			held.Release()
		}
	}
	l, err := acquireLock(ctx, dir, 30*time.Second) // the holder lets go well before
	if err != nil {
		t.Fatalf("acquireLock, waiting: %v (logged %q)", err, logs.take())
	}
	l.Release()
	lines = logs.take()
	if line := find(lines, "dataset: still waiting for the writer lock"); !strings.Contains(line, " held_by="+holder) ||
		!strings.Contains(line, " waited=") {
		t.Fatalf("a line while waiting: %q; want the holder and the time waited in %q", line, lines)
	}
	line := find(lines, "dataset: took the writer lock")
	var waited time.Duration
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "waited="); ok {
			waited, _ = time.ParseDuration(v)
		}
	}
	if waited <= 0 {
		t.Fatalf("the line once the lock is taken: %q; want how long it waited, in %q", line, lines)
	}
}
