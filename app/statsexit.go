package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// statsTried marks, in a stage's context, that its run wrote (or tried
// to write) --stats-json (writeStatsJSON).
type statsTried struct{ tried bool }

type statsTriedKey struct{}

// noteStatsTried records in ctx that the run's --stats-json was written
// (or its writing failed, which its error says).
func noteStatsTried(ctx context.Context) {
	if m, ok := ctx.Value(statsTriedKey{}).(*statsTried); ok {
		m.tried = true
	}
}

// exitOnly is the --stats-json of a run that ended before writing its
// counters.
type exitOnly struct {
	ExitStatus int `json:"exit_status"`
}

// statsOnEveryExit wraps the Action of c, when it is a stage (it takes
// --stats-json), so that --stats-json is written on every exit
// --metrics-file is (metricsOnEveryExit): a run that returns before
// writing its counters (exit 75 locked, 2 bad input, 1, 130 before its
// end) writes {"exit_status": N} alone, not counters it did not commit.
// Left unwritten: after a usage error, after quietOnPipe's 141, and a
// file the run already tried. It is to wrap the Action before
// metricsOnEveryExit does, so that --stats-json is written first and the
// metrics record the exit its failure makes (writeStatsJSON's order).
func statsOnEveryExit(c *cli.Command) {
	if c.Action == nil || !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "stats-json") }) {
		return
	}
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		m, ok := cc.Context.Value(statsTriedKey{}).(*statsTried)
		if !ok { // wrapped twice: one mark for both
			m = &statsTried{}
			cc.Context = context.WithValue(cc.Context, statsTriedKey{}, m)
		}
		err := action(cc)
		p := cc.String("stats-json")
		var usage *usageErr
		if m.tried || p == "" || errors.As(err, &usage) {
			return err
		}
		code := exitStatus(cc.Context, err)
		if code == exitcode.BrokenPipe && quietOnPipe[c.Name] {
			return err
		}
		b, _ := json.MarshalIndent(exitOnly{ExitStatus: code}, "", "  ")
		if serr := writeReport(cc, "stats-json", p, append(b, '\n')); serr != nil {
			if err == nil {
				return serr
			}
			// The run's status says more than the report's (75: retry).
			return exitcode.With(code, fmt.Errorf("%w; and %w", err, serr))
		}
		return err
	}
}
