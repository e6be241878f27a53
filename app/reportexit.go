package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// reportsTried marks, in a stage's context, the report flags
// ("stats-json", "metrics-file") whose file its run wrote or tried to
// write (writeStatsJSON, writeMetrics).
type reportsTried map[string]bool

type reportsTriedKey struct{}

// noteReportTried records in ctx that the run's report of flag was
// written (or its writing failed, which its error says).
func noteReportTried(ctx context.Context, flag string) {
	if tried, ok := ctx.Value(reportsTriedKey{}).(reportsTried); ok {
		tried[flag] = true
	}
}

// reportsOnEveryExit makes c, when it is a stage (it takes --stats-json),
// write --stats-json and --metrics-file on every exit but those
// reportOnEveryExit leaves: a run that ended before writing its counters
// writes {"exit_status": N} alone to --stats-json, and to --metrics-file
// exit_status, its duration and the last success time of the file it
// replaces (writeMetrics), no counters. --stats-json is written first, so
// that the metrics record the exit its failure makes (writeStatsJSON's
// order): of two wrappers, the one installed first runs first once the
// Action returns.
func reportsOnEveryExit(c *cli.Command) {
	reportOnEveryExit(c, "stats-json", writeExitOnly)
	reportOnEveryExit(c, "metrics-file", func(cc *cli.Context, code int) error {
		return writeMetrics(cc, nil, code)
	})
}

// writeExitOnly writes {"exit_status": code} alone to --stats-json: the
// counters of a run that ended before writing them are not committed.
func writeExitOnly(cc *cli.Context, code int) error {
	b, err := withExitStatus(struct{}{}, code)
	if err != nil {
		return err
	}
	return writeReport(cc, "stats-json", cc.String("stats-json"), b)
}

// withExitStatus is --stats-json's text: v, the run's counters (a JSON
// object), with "exit_status": code first, indented by two spaces.
func withExitStatus(v any, code int) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("counters are not a JSON object: %.40s", b)
	}
	obj := fmt.Appendf(nil, `{"exit_status":%d`, code)
	if string(b) != "{}" {
		obj = append(obj, ',')
	}
	obj = append(obj, b[1:]...)
	var out bytes.Buffer
	if err := json.Indent(&out, obj, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// reportOnEveryExit wraps the Action of c, when it is a stage (it takes
// --stats-json), so that the report of flag is written whatever the run
// ends with: a run that returns before writing it (exit 75 locked, 2 bad
// input, 1, 130 before its end) has write write it with the status the
// process exits with (exitStatus) and no counters (it has none; a 0
// would read as a level such as state_rows gone to 0). Left unwritten:
// after a usage error (usageError; the flag parser's own come before the
// Action), after quietOnPipe's 141, and a file the run already tried
// (its error says why that failed). When write fails, the run's status
// says more than the report's (75: retry): a run that failed keeps its
// status, its error joined with write's.
func reportOnEveryExit(c *cli.Command, flag string, write func(cc *cli.Context, code int) error) {
	if c.Action == nil || !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "stats-json") }) {
		return
	}
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		tried, ok := cc.Context.Value(reportsTriedKey{}).(reportsTried)
		if !ok { // wrapped more than once: one mark for all
			tried = reportsTried{}
			cc.Context = context.WithValue(cc.Context, reportsTriedKey{}, tried)
		}
		err := action(cc)
		var usage *usageErr
		if tried[flag] || cc.String(flag) == "" || errors.As(err, &usage) {
			return err
		}
		code := exitStatus(cc.Context, err)
		if code == exitcode.BrokenPipe && quietOnPipe[c.Name] {
			return err
		}
		if rerr := write(cc, code); rerr != nil {
			if err == nil {
				return rerr
			}
			return exitcode.With(code, fmt.Errorf("%w; and %w", err, rerr))
		}
		return err
	}
}

// quietOnPipe names the stages that write no --metrics-file (nor
// --stats-json) when their output's reader went away (141: nothing
// printed, no report), as their EXIT STATUS says; the others report it.
var quietOnPipe = map[string]bool{"capture": true, "fetch": true, "export": true}

// usageErr is a usage error found by a command's Action: a flag's value,
// a stray argument, an -o path it cannot write. It exits 2, as bad input
// does, but writes no report (reportOnEveryExit).
type usageErr struct{ err error }

func (u *usageErr) Error() string { return u.err.Error() }
func (u *usageErr) Unwrap() error { return u.err }

// usageError makes err a usage error (exit 2, no --metrics-file nor
// --stats-json).
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
