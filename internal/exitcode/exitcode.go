// Package exitcode names infohash's exit statuses and maps errors to them.
// It is the one place that decides what a failure means to a shell script
// or cron job.
package exitcode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Exit statuses shared by every command.
const (
	OK          = 0   // everything asked for was done
	Error       = 1   // an unexpected failure; nothing committed (but a migration on open) unless it says "committed snapshot N; then: …"
	Usage       = 2   // bad flags or bad input; nothing committed (but a migration on open)
	Partial     = 3   // some inputs or jobs left unprocessed; what was done is committed
	Locked      = 75  // the dataset is locked by another writer (EX_TEMPFAIL)
	Interrupted = 130 // stopped by SIGINT/SIGTERM; what was done is committed
	BrokenPipe  = 141 // the reader of the output went away (as a shell reports death by SIGPIPE)
)

// A Row is one line of an EXIT STATUS table: a status and what it means
// for the command whose --help lists it (each command lists only the
// statuses it can end with, in its own words).
type Row struct {
	Code int
	Text string
}

// Generic are the rows of the top-level --help (and README's table): every
// status, worded for all commands at once.
var Generic = []Row{
	{OK, "ok"},
	{Error, `error; nothing committed (but a migration: a writer opening an older format's DIR commits one first), unless it says "committed snapshot N; then: …" (a step after that commit failed)`},
	{Usage, "usage error or bad input (nothing committed but a migration: a writer opening an older format's DIR commits one first)"},
	{Partial, "partial (dedup, fetch, merge): some inputs or jobs left unprocessed, what was done is committed; capture, fetch: -o FILE's disk filled up, what fit is kept, or no DHT node answered the bootstrap (an outage: check the network and --bootstrap), the output written"},
	{Locked, "dataset locked by another writer (retry later, or use --lock-wait); capture, fetch: their --dht-state, or their -o FILE.arrows (or the file -o - is redirected to), in use by another run"},
	{Interrupted, "interrupted (SIGINT/SIGTERM); what was done is committed"},
	{BrokenPipe, `the output's reader went away (e.g. "| head"); nothing is printed, but plan-retries prints one line: what it leased (nothing, or how many jobs until when)`},
}

// helpWidth is the width an EXIT STATUS row's text is wrapped to.
const helpWidth = 80

// Help formats rows, in the order given, as the EXIT STATUS section a
// --help ends with: a row's text is wrapped under itself.
func Help(rows ...Row) string {
	const indent = "        " // under the text: "   " + a code in 4 columns + " "
	var b strings.Builder
	b.WriteString("EXIT STATUS:")
	for _, r := range rows {
		line := fmt.Sprintf("\n   %-4d", r.Code)
		width := utf8.RuneCountInString(line) - 1 // less the newline
		for i, w := range strings.Fields(r.Text) {
			n := utf8.RuneCountInString(w)
			if i > 0 && width+1+n > helpWidth {
				b.WriteString(line)
				line, width = "\n"+indent+w, len(indent)+n
				continue
			}
			line += " " + w
			width += 1 + n
		}
		b.WriteString(line)
	}
	return b.String()
}

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
var ErrLocked = errors.New("locked by another writer")

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
