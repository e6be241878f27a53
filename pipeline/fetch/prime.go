package fetch

import (
	"context"
	"errors"
	"io"
)

// primeBatch is the number of jobs read, and checked, before the run
// starts its DHT node: the size of readJobs' batches.
const primeBatch = 256

// primedJobs is a jobs input whose first batch was read before the run
// started: Read hands that batch over first, then reads in.
type primedJobs struct {
	in    jobSource
	first chan batch // the first batch, until Read takes it
	rows  []jobRow   // the first batch's rows not handed over yet
	err   error      // the first batch's error, once its rows are handed over: sticky
}

// primeJobs reads in's first batch of jobs before the run contacts the
// network, so that input that is bad from its start (not a jobs file,
// a malformed first line, a bad row among the first primeBatch) is
// refused at once, before a DHT bootstrap, as bad input. It reads no
// further: a jobs stream (stdin) can be read only once and may be large,
// and its jobs start as they come; a bad row past the first batch still
// ends the run as bad input, with nothing committed. When ctx ends first
// (a stream that has not sent a job yet) the run goes on to stop as
// usual, and Read waits for that batch.
func primeJobs(ctx context.Context, in jobSource) (*primedJobs, error) {
	p := &primedJobs{in: in, first: make(chan batch, 1)}
	go func() {
		buf := make([]jobRow, primeBatch)
		n, err := in.Read(buf)
		p.first <- batch{buf[:n], err}
	}()
	select {
	case b := <-p.first:
		if b.err != nil && !errors.Is(b.err, io.EOF) {
			return nil, b.err
		}
		p.first <- b
	case <-ctx.Done():
	}
	return p, nil
}

// empty reports whether the input ended without a job: its first batch,
// read by primeJobs, holds no row and ends it. It is false while that
// batch has not come (primeJobs cut short).
func (p *primedJobs) empty() bool {
	select {
	case b := <-p.first:
		p.first <- b
		return len(b.rows) == 0 && errors.Is(b.err, io.EOF)
	default:
		return false
	}
}

// Read hands over the first batch, then reads the input.
func (p *primedJobs) Read(buf []jobRow) (int, error) {
	if p.first != nil {
		b := <-p.first
		p.first = nil
		p.rows, p.err = b.rows, b.err
		if len(p.rows) == 0 && p.err == nil {
			return 0, nil
		}
	}
	if len(p.rows) == 0 && p.err == nil {
		return p.in.Read(buf)
	}
	n := copy(buf, p.rows)
	p.rows = p.rows[n:]
	if len(p.rows) > 0 {
		return n, nil
	}
	return n, p.err
}

// Unread is the input's Unread plus the rows of the first batch not
// handed over yet.
func (p *primedJobs) Unread() (int64, bool) {
	n, ok := p.in.Unread()
	return n + int64(len(p.rows)), ok
}
