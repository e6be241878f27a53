// Package exitcode names infohash's exit statuses and maps errors to them.
// It is the one place that decides what a failure means to a shell script
// or cron job.
package exitcode

import (
	"context"
	"errors"
	"syscall"
)

// Exit statuses shared by every command.
const (
	OK          = 0   // everything asked for was done
	Error       = 1   // an unexpected failure; nothing committed unless it says "committed snapshot N; then: …"
	Usage       = 2   // bad flags or bad input; nothing committed
	Partial     = 3   // some inputs or jobs left unprocessed; what was done is committed
	Locked      = 75  // the dataset is locked by another writer (EX_TEMPFAIL)
	Interrupted = 130 // stopped by SIGINT/SIGTERM; what was done is committed
	BrokenPipe  = 141 // the reader of the output went away (as a shell reports death by SIGPIPE)
)

// Help is the EXIT STATUS section every command's --help ends with.
const Help = `EXIT STATUS:
   0    ok
   1    error; nothing committed, unless it says "committed snapshot N; then: …"
        (a step after that commit failed)
   2    usage error or bad input (nothing committed)
   3    partial: some inputs or jobs left unprocessed, what was done is committed
   75   dataset locked by another writer (retry later, or use --lock-wait)
   130  interrupted (SIGINT/SIGTERM); what was done is committed
   141  the output's reader went away (e.g. "| head"); nothing is printed`

// coded is an error that carries its exit status.
type coded struct {
	code int
	err  error
}

func (c *coded) Error() string { return c.err.Error() }
func (c *coded) Unwrap() error { return c.err }

// With attaches exit status code to err (nil stays nil).
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &coded{code: code, err: err}
}

// BadInput marks err as a usage or bad-input error (exit 2).
func BadInput(err error) error { return With(Usage, err) }

// ErrLocked is wrapped by errors reporting a dataset held by another writer.
var ErrLocked = errors.New("dataset locked by another writer")

// ErrPartial is wrapped by errors reporting that some work was left undone
// after what was done had been committed.
var ErrPartial = errors.New("partial")

// Of classifies err into an exit status.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c *coded
	if errors.As(err, &c) {
		return c.code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Interrupted
	case errors.Is(err, syscall.EPIPE):
		return BrokenPipe
	case errors.Is(err, ErrLocked):
		return Locked
	case errors.Is(err, ErrPartial):
		return Partial
	}
	return Error
}
