package fetch

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// afterStop is a slog handler that counts the records it gets once stopped
// is set.
type afterStop struct {
	stopped *atomic.Bool
	late    *atomic.Int64
	seen    *atomic.Int64
}

func (h afterStop) Enabled(context.Context, slog.Level) bool { return true }
func (h afterStop) Handle(context.Context, slog.Record) error {
	h.seen.Add(1)
	if h.stopped.Load() {
		h.late.Add(1)
	}
	return nil
}
func (h afterStop) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h afterStop) WithGroup(string) slog.Handler      { return h }

// TestProgressStopWaits checks that no progress line is logged once stop
// has returned: Run's caller writes its own lines on the same stderr then
// (a data race, seen in CI, when a last tick was still being logged).
func TestProgressStopWaits(t *testing.T) {
	var stopped atomic.Bool
	var late, seen atomic.Int64
	h := afterStop{&stopped, &late, &seen}
	for range 300 {
		stopped.Store(false)
		f := &Fetcher{opts: Options{Logger: slog.New(h), Progress: time.Microsecond}, stats: newCounters(), start: time.Now()}
		stop := f.progress(context.Background())
		time.Sleep(20 * time.Microsecond)
		stop()
		stopped.Store(true)
		time.Sleep(10 * time.Microsecond)
	}
	if seen.Load() == 0 {
		t.Fatal("no progress line was logged at all: the test proves nothing")
	}
	if n := late.Load(); n > 0 {
		t.Errorf("%d progress lines logged after stop returned", n)
	}
}
