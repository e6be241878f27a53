package progress

// Phase reports a step of long work that has no units to count (a sort,
// a table read whole): a step that runs for Interval or more logs its
// label (with the time elapsed) then and every Interval after, and a last
// line with finished=true when it ends; a shorter one logs nothing. With
// Interval 0 (tests) it logs as it starts and as it ends. It is a
// Reporter without units, which a ticker paces since nothing calls Add.
type Phase struct{ r *Reporter }

// StartPhase starts reporting the step label (it logs through slog).
// End it with End.
func StartPhase(label string) *Phase {
	p := &Phase{r: start(label, 0, false)}
	if p.r.every <= 0 {
		p.r.log(now())
		return p
	}
	p.r.startTicker()
	return p
}

// End ends the step: once it returns, the step logs no more, its ticker
// has stopped, and if it logged, it has logged its last line. A nil Phase
// (none started) does nothing.
func (p *Phase) End() {
	if p == nil {
		return
	}
	p.r.Done()
	if p.r.exited != nil {
		<-p.r.exited
	}
}
