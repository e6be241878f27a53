package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// hiddenCommands are helpers for scripts, left out of infohash --help
// (each has its own --help) and of the stages' data flow.
func hiddenCommands() []*cli.Command {
	return []*cli.Command{clockCommand()}
}

// clockCommand prints the clock a stage would run on: --now, parsed as
// every stage's --now is (parseNow), or the wall clock. It reads no
// dataset, so a script can check a --now it will pass later (exit 2, the
// stages' own one-line error) before any step, on any system:
// scripts/cron/crawl-pass.sh checks its NOW with it.
func clockCommand() *cli.Command {
	return &cli.Command{
		Name:   "clock",
		Hidden: true,
		Usage:  "print the time a stage would take as its clock: --now in UTC, or the wall clock",
		UsageText: `infohash clock [--now TIME]

   infohash clock --now 2026-01-02T05:04:05+02:00     # 2026-01-02T03:04:05Z
   infohash clock --now "$NOW" >/dev/null || exit 2   # a script's check of a --now it will pass`,
		Description: `Parses --now as dedup, plan-retries, merge and status do and prints it in
UTC (RFC 3339, with its fraction of a second if it has one); without
--now it prints the wall clock. It reads and writes nothing else, so it
needs no dataset.

EXIT STATUS:
   0    ok: the time is printed
   2    --now is not an RFC 3339 time the stages take (one line says so), or another usage error`,
		Flags: []cli.Flag{&cli.StringFlag{Name: "now", Usage: "the `TIME` (RFC 3339) to check, as the stages' --now takes it"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return exitcode.BadInput(fmt.Errorf("clock: unexpected argument %q (the time is --now TIME)", c.Args().First()))
			}
			now, err := parseNow(c)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, now.Format(time.RFC3339Nano))
			return err
		},
	}
}
