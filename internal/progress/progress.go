// Package progress reports progress on long work: a bar when stderr is a
// terminal (schollz/progressbar), drawn once the work has run for Delay,
// otherwise a log line every interval, so cron logs show a long pass is
// alive without filling up. Short work shows neither.
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
	units    bool                     // its lines carry the count (not a Phase's)
	ticking  bool                     // a ticker paces its lines, not Add (NewTicking, a Phase)
	barTo    io.Writer                // the terminal its bar goes to (nil: it logs)
	bar      *progressbar.ProgressBar // drawn once the work has run for Delay
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

// Delay is how long work runs before a reporter draws its bar, at the
// first Add after it: an export of 0.06 s drew one and cleared it. (The
// lines logged without a terminal wait for Interval.)
var Delay = time.Second

// now and isTerminal are the clock and the test for a terminal
// (variables for tests, which set the time and have no terminal).
var (
	now        = time.Now
	isTerminal = func(w io.Writer) bool {
		f, ok := w.(*os.File)
		return ok && term.IsTerminal(int(f.Fd()))
	}
)

// New starts reporting work on label with total units (-1 if unknown).
// It draws a bar on w when w is a terminal, once the work has run for
// Delay; otherwise it logs via slog.
func New(w io.Writer, label string, total int64) *Reporter {
	r := start(label, total, true)
	if isTerminal(w) {
		r.barTo = w
	}
	return r
}

// drawBar draws r's bar, at its count so far (the caller holds r.mu).
func (r *Reporter) drawBar() {
	r.bar = progressbar.NewOptions64(r.total,
		progressbar.OptionSetWriter(r.barTo),
		progressbar.OptionSetDescription(r.label),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish())
	r.bar.Add64(r.done)
}

// NewTicking is New for work whose units may come slowly (an export's
// partition, which a slow reader of its output can hold up for long):
// without a bar, a ticker paces its lines, one every Interval whether or
// not Add was called meanwhile, so that the first comes on time; Add
// only counts. Done ends the ticker.
func NewTicking(w io.Writer, label string, total int64) *Reporter {
	r := New(w, label, total)
	if r.barTo == nil && r.every > 0 {
		r.startTicker()
	}
	return r
}

// startTicker makes a ticker pace r's lines, until Done.
func (r *Reporter) startTicker() {
	r.ticking = true
	r.stop, r.exited = make(chan struct{}), make(chan struct{})
	go r.tick()
}

// newTicker is the ticker of a ticking Reporter (a variable for tests,
// which tick by hand).
var newTicker = func(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// tick logs r's line every interval until Done closes the stop channel.
func (r *Reporter) tick() {
	defer close(r.exited)
	c, stop := newTicker(r.every)
	defer stop()
	for {
		select {
		case <-r.stop:
			return
		case <-c:
			r.mu.Lock()
			if !r.finished { // Done came first: it logged the last line
				r.log(now())
			}
			r.mu.Unlock()
		}
	}
}

// Add records n more units done.
func (r *Reporter) Add(n int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	switch {
	case r.bar != nil:
		r.bar.Add64(n)
		return
	case r.barTo != nil:
		if now().Sub(r.start) >= Delay {
			r.drawBar()
		}
		return
	case r.ticking:
		return
	}
	if t := now(); t.Sub(r.last) >= r.every {
		r.last = t
		r.log(t)
	}
}

// start returns a Reporter of label, counting units or not, that starts
// now and logs every Interval.
func start(label string, total int64, units bool) *Reporter {
	t := now()
	return &Reporter{label: label, total: total, units: units, every: Interval, start: t, last: t}
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

// Done ends the report, clearing the bar if one was drawn (on a
// terminal, work shorter than Delay draws none). Without a terminal, work
// that lasted an interval or more (it may have logged its count) logs its
// final count, with finished=true: a long pass ends on its total, not on
// the count of its last periodic line. A Phase, which its ticker paces, logs its last
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
	if r.barTo != nil {
		if r.bar != nil {
			r.bar.Finish()
		}
		return
	}
	if t := now(); r.logged || (r.units && t.Sub(r.start) >= r.every) {
		r.log(t, "finished", true)
	}
}

// Count reports the units done so far.
func (r *Reporter) Count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}
