package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// lines passes on each log line written to it.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// TestNewTicking: a ticking reporter logs on its ticker, whether or not
// Add was called since (a unit that takes long, an export's partition
// written to a slow reader, is seen alive), and Add alone logs nothing;
// Done logs the last count. The ticks come by hand (newTicker), not by
// the clock, and each line is waited for before going on.
func TestNewTicking(t *testing.T) {
	logged := make(lines, 10)
	old, oldEvery, oldTicker := slog.Default(), Interval, newTicker
	t.Cleanup(func() { slog.SetDefault(old); Interval = oldEvery; newTicker = oldTicker })
	slog.SetDefault(slog.New(slog.NewTextHandler(logged, nil)))
	Interval = time.Hour // Add would not log on its own for an hour
	ticks := make(chan time.Time)
	newTicker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }

	r := NewTicking(&bytes.Buffer{}, "export: partitions", 4)
	var got []string
	next := func() {
		l := <-logged
		got = append(got, l[strings.Index(l, "msg="):strings.Index(l, " elapsed=")]+
			map[bool]string{true: " finished"}[strings.Contains(l, "finished=true")])
	}
	ticks <- time.Now() // the first partition has taken an interval so far
	next()
	r.Add(1)
	r.Add(2) // counted, not logged
	ticks <- time.Now()
	next()
	r.Add(1)
	r.Done()
	next()
	<-r.exited
	select {
	case l := <-logged:
		t.Errorf("a line after Done: %s", l)
	default:
	}
	want := []string{`msg="export: partitions" done=0`, `msg="export: partitions" done=3`, `msg="export: partitions" done=4 finished`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
