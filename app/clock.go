package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// helperCommands are helpers for scripts, listed in infohash --help after
// the commands of the data flow (commands), which they are no part of.
func helperCommands() []*cli.Command {
	return []*cli.Command{clockCommand()}
}

// clockCommand prints the clock a stage would run on: --now, parsed as
// every stage's --now is (parseNow), or the wall clock, moved by --add.
// It reads no dataset, so a script can check a --now it will pass later
// (exit 2, the stages' own one-line error) before any step, and compute
// a later or earlier clock, on any system: GNU date's -d is not on macOS
// or the BSDs. scripts/cron/crawl-pass.sh checks its NOW with it, and
// gives each step NOW plus the time since the pass began with --started
// (first named --since, which export's --since, a filter on last_seen,
// made confusing: --since still works, hidden from --help);
// scripts/demo.sh and scripts/bench-schedule.sh move a clock with --add.
func clockCommand() *cli.Command {
	return &cli.Command{
		Name:  "clock",
		Usage: "print the clock a stage would run on (--now or the wall clock, in UTC), moved by --add or --started",
		UsageText: `infohash clock [--now TIME [--started WALL]] [--add DURATION]

   infohash clock --now 2026-01-02T05:04:05+02:00            # 2026-01-02T03:04:05Z
   NOW=2026-01-02T03:04:05Z; infohash clock --now "$NOW" >/dev/null || exit 2   # a script's check of a --now it will pass
   infohash clock --now 2026-01-02T03:04:05Z --add 90m       # 2026-01-02T04:34:05Z
   infohash clock --now 2026-01-02T03:04:05Z --add=-1d       # 2026-01-01T03:04:05Z
   NOW=$(infohash clock --now "$(date -u +%FT%TZ)" --add 3h) # in 3 hours, in whole seconds
   NOW=2026-01-02T03:04:05Z START=$(infohash clock); sleep 2; infohash clock --now "$NOW" --started "$START"   # NOW + the time since START (2s)`,
		Description: `Parses --now as the stages (all but export) and status do and prints it in
UTC (RFC 3339, with its fraction of a second if it has one); without
--now it prints the wall clock. --add moves that time by a duration as
the duration flags take it (Go's, such as 3h, 1h30m or -90m, plus d and
w for days and weeks; a negative one moves it back). --started WALL, a
wall-clock time as clock prints it without --now, moves --now on by the
wall-clock time elapsed since WALL (none if WALL is later): a clock that
read --now at WALL and ran on since, as capture's and fetch's --now does;
crawl-pass.sh reckons each step's --now so (--since WALL, its old name,
still works). It reads and writes nothing else, so it needs no dataset:
scripts use it in place of GNU date's -d, which macOS and the BSDs lack,
and of date +%N, GNU's alone.

` + exitHelp("clock"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "now", Usage: "the `TIME` (RFC 3339) to check, as the stages' --now takes it (" + nowBounds + ")", DefaultText: wallClock},
			durationFlag("add", 0, "move the time printed by `DURATION` (3h, 1h30m, 1d; negative: back)"),
			&cli.StringFlag{Name: "started", Usage: "move --now on by the wall-clock time elapsed since `WALL` (RFC 3339, as clock prints the wall clock; none if WALL is later)"},
			// --started's first name: scripts may pass it still. Not an
			// alias, which --help would list: export's --since is
			// another thing (a filter on last_seen).
			&cli.StringFlag{Name: "since", Hidden: true},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.BadInput(fmt.Errorf("clock: unexpected argument %q (the time is --now TIME)", c.Args().First()))
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			if flag, ok, err := startedFlag(c); err != nil {
				return err
			} else if ok {
				s := c.String(flag)
				if c.String("now") == "" {
					return badFlag(c, "--%s needs --now: the wall clock has already moved on since %s", flag, s)
				}
				wall, err := parseRFC3339(s)
				if err != nil {
					return badFlag(c, "--%s: %q is not an RFC 3339 time: %s", flag, s, timeParseReason(err))
				}
				// A WALL later than the wall clock (set back since) adds
				// nothing: the clock does not run backwards.
				if at := time.Now(); wall.Before(at) {
					now = addSpan(now, wall, at)
				}
				if now.Year() > 9999 {
					return badFlag(c, "--%s %s moves the time past the year 9999 that RFC 3339 can write", flag, s)
				}
			}
			if d := flagDuration(c, "add"); d != 0 {
				if now = now.Add(d); now.Year() < 0 || now.Year() > 9999 {
					return exitcode.BadInput(fmt.Errorf("clock: --add %s moves the time out of the years 0000-9999 that RFC 3339 can write", showDuration(d)))
				}
			}
			_, err = fmt.Fprintln(c.App.Writer, now.Format(time.RFC3339Nano))
			return err
		},
	}
}

// startedFlag names the flag that gave clock its WALL: "started", or
// "since", its old name, as the command line spelt it (errors name it so);
// ok is false when neither was given. Both at once is a usage error, as
// for a flag and its alias.
func startedFlag(c *cli.Context) (flag string, ok bool, err error) {
	switch started, since := c.IsSet("started"), c.IsSet("since"); {
	case started && since:
		return "", false, badFlag(c, "--started and --since are one flag: give it once")
	case started:
		return "started", true, nil
	case since:
		return "since", true, nil
	}
	return "", false, nil
}

// addSpan returns t moved on by the time from from to to, which may be
// longer than a time.Duration holds (about 292 years: a --started WALL
// in the year 1500), where time.Since would give the largest Duration
// and move t by 292 years whatever the span.
func addSpan(t, from, to time.Time) time.Time {
	if d := to.Sub(from); from.Add(d).Equal(to) {
		return t.Add(d)
	}
	return time.Unix(t.Unix()+(to.Unix()-from.Unix()), int64(t.Nanosecond()+to.Nanosecond()-from.Nanosecond())).UTC()
}
