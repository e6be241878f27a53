package progress

import (
	"log/slog"
	"sync"
	"time"
)

// Phase reports a step of long work that has no units to count (a sort,
// a table read whole): a step that runs for Interval or more logs its
// label (with the time elapsed) then and every Interval after, and a last
// line with finished=true when it ends; a shorter one logs nothing. With
// Interval 0 (tests) it logs as it starts and as it ends.
type Phase struct {
	label  string
	start  time.Time
	stop   chan struct{}
	exited chan struct{}
	once   sync.Once
	mu     sync.Mutex
	logged bool
}

// StartPhase starts reporting the step label (it logs through slog).
// End it with End.
func StartPhase(label string) *Phase {
	p := &Phase{label: label, start: time.Now()}
	every := Interval
	if every <= 0 {
		p.log()
		return p
	}
	p.stop, p.exited = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.log()
			}
		}
	}()
	return p
}

// log logs the step's label with the time elapsed, and more args.
func (p *Phase) log(more ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logged = true
	args := []any{"elapsed", time.Since(p.start).Round(time.Second).String()}
	slog.Info(p.label, append(args, more...)...)
}

// End ends the step: once it returns, the step logs no more, and if it
// logged, it has logged its last line. A nil Phase (none started) does
// nothing.
func (p *Phase) End() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		if p.stop != nil {
			close(p.stop)
			<-p.exited
		}
		if p.logged {
			p.log("finished", true)
		}
	})
}
