// Package progress reports progress on long work: a bar when stderr is a
// terminal (schollz/progressbar), otherwise a log line every interval, so
// cron logs show a long pass is alive without filling up.
package progress

import (
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Reporter counts done units of work. A Phase holds one that counts
// nothing (units false), paced by a ticker instead of by Add.
type Reporter struct {
	mu       sync.Mutex
	label    string
	total    int64
	done     int64
	units    bool // its lines carry the count (not a Phase's)
	bar      *progressbar.ProgressBar
	every    time.Duration
	last     time.Time
	start    time.Time
	logged   bool
	finished bool
	stop     chan struct{} // a Phase's ticker: closed by Done
	exited   chan struct{} // closed as the ticker exits
}

// Interval is how often the non-terminal reporter logs.
var Interval = 10 * time.Second

// New starts reporting work on label with total units (-1 if unknown).
// It draws a bar on w when w is a terminal; otherwise it logs via slog.
func New(w io.Writer, label string, total int64) *Reporter {
	r := start(label, total, true)
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		r.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return r
}

// Add records n more units done.
func (r *Reporter) Add(n int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	if r.bar != nil {
		r.bar.Add64(n)
		return
	}
	if now := time.Now(); now.Sub(r.last) >= r.every {
		r.last = now
		r.log(now)
	}
}

// start returns a Reporter of label, counting units or not, that starts
// now and logs every Interval.
func start(label string, total int64, units bool) *Reporter {
	now := time.Now()
	return &Reporter{label: label, total: total, units: units, every: Interval, start: now, last: now}
}

// log logs the count so far if r counts units (the caller holds r.mu),
// the time elapsed, and more args.
func (r *Reporter) log(now time.Time, more ...any) {
	r.logged = true
	args := []any{"elapsed", now.Sub(r.start).Round(time.Second).String()}
	if r.units {
		args = append([]any{"done", r.done}, args...)
	}
	if r.total > 0 {
		args = append(args, "total", r.total, "percent", 100*r.done/r.total)
	}
	slog.Info(r.label, append(args, more...)...)
}

// Done ends the report. Without a bar, work that lasted an interval or
// more (it may have logged its count) logs its final count, with
// finished=true: a long pass ends on its total, not on the count of its
// last periodic line. A Phase, which its ticker paces, logs its last
// line if it logged; its ticker logs nothing once Done returns.
func (r *Reporter) Done() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	r.finished = true
	if r.stop != nil {
		close(r.stop)
	}
	if r.bar != nil {
		r.bar.Finish()
		return
	}
	if now := time.Now(); r.logged || (r.units && now.Sub(r.start) >= r.every) {
		r.log(now, "finished", true)
	}
}

// Count reports the units done so far.
func (r *Reporter) Count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}
