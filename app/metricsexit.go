package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// metricsTried marks, in a stage's context, that its run wrote (or tried
// to write) --metrics-file.
type metricsTried struct{ tried bool }

type metricsTriedKey struct{}

// noteMetricsTried records in ctx that the run's metrics were written
// (or their writing failed, which its error says).
func noteMetricsTried(ctx context.Context) {
	if m, ok := ctx.Value(metricsTriedKey{}).(*metricsTried); ok {
		m.tried = true
	}
}

// metricsOnEveryExit wraps the Action of c, when it is a stage (it takes
// --stats-json), so that --metrics-file is written whatever the run ends
// with: a run that returns before writing its counters (exit 75 locked, 2
// bad input, 1, 130 before any work) writes exit_status, its duration and
// the last success time of the file it replaces, and no counters (it has
// none; a 0 would read as a level such as state_rows gone to 0). Left
// unwritten: after a usage error (usageError; the flag parser's own come
// before the Action), after quietOnPipe's 141, and a file the run
// already tried (its error says why that failed).
func metricsOnEveryExit(c *cli.Command) {
	if c.Action == nil || !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "stats-json") }) {
		return
	}
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		m, ok := cc.Context.Value(metricsTriedKey{}).(*metricsTried)
		if !ok { // wrapped twice: one mark for both
			m = &metricsTried{}
			cc.Context = context.WithValue(cc.Context, metricsTriedKey{}, m)
		}
		err := action(cc)
		var usage *usageErr
		if m.tried || cc.String("metrics-file") == "" || errors.As(err, &usage) {
			return err
		}
		code := exitStatus(cc.Context, err)
		if code == exitcode.BrokenPipe && quietOnPipe[c.Name] {
			return err
		}
		if merr := writeMetrics(cc, nil, code); merr != nil {
			if err == nil {
				return merr
			}
			// The run's status says more than the report's (75: retry).
			return exitcode.With(code, fmt.Errorf("%w; and %w", err, merr))
		}
		return err
	}
}

// quietOnPipe names the stages that write no --metrics-file when their
// output's reader went away (141: nothing printed, no report), as their
// EXIT STATUS says; the others report it.
var quietOnPipe = map[string]bool{"capture": true, "fetch": true, "export": true}

// usageErr is a usage error found by a command's Action: a flag's value,
// a stray argument, an -o path it cannot write. It exits 2, as bad input
// does, but writes no --metrics-file (metricsOnEveryExit).
type usageErr struct{ err error }

func (u *usageErr) Error() string { return u.err.Error() }
func (u *usageErr) Unwrap() error { return u.err }

// usageError makes err a usage error (exit 2, no --metrics-file).
func usageError(err error) error {
	return exitcode.BadInput(&usageErr{err: err})
}

// exitStatus is the status the process exits with when its command
// returns err (run): exitcode's, the flag parser's untyped errors as
// usage errors, and an error under a signal (ctx cancelled) as 130.
func exitStatus(ctx context.Context, err error) int {
	code := exitcode.Of(err)
	if code == exitcode.Error && isUsage(err) {
		code = exitcode.Usage
	}
	if ctx.Err() != nil && code == exitcode.Error {
		code = exitcode.Interrupted
	}
	return code
}
