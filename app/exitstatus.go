package app

import (
	"fmt"

	"github.com/infohash/infohash/internal/exitcode"
)

// Rows that several commands' EXIT STATUS tables share.
var (
	exitOK        = exitcode.Row{Code: exitcode.OK, Text: "ok"}
	exitCommitted = exitcode.Row{Code: exitcode.Error, Text: `error; nothing committed (but a migration: a writer opening an older format's DIR commits one first), unless it says "committed snapshot N; then: …" (a step after that commit failed)`}
	exitBadInput  = exitcode.Row{Code: exitcode.Usage, Text: "usage error or bad input (nothing committed but a migration: a writer opening an older format's DIR commits one first)"}
	exitLocked    = exitcode.Row{Code: exitcode.Locked, Text: "dataset locked by another writer (retry later, or use --lock-wait)"}
	exitQuietPipe = exitcode.Row{Code: exitcode.BrokenPipe, Text: `the output's reader went away (e.g. "| head"); nothing is printed`}
	// exitReportPipe is the 141 of a command whose only output on stdout
	// is a report (--stats-json -, --metrics-file -), written last.
	exitReportPipe = exitcode.Row{Code: exitcode.BrokenPipe, Text: "the reader of --stats-json - or --metrics-file - went away (after the commit); nothing is printed"}
)

// exitRows are the EXIT STATUS tables of the commands (policy's
// subcommands as "policy show"): each lists the statuses the command can
// end with, and what each means for it. The statuses themselves are
// exitcode's.
var exitRows = map[string][]exitcode.Row{
	"capture": {
		exitOK,
		{Code: exitcode.Error, Text: "error; the -o FILE is not kept (no room for it at the start: nothing captured)"},
		{Code: exitcode.Usage, Text: "usage error, or a --dht-state it may not write to or whose dht-state.json is of another version (nothing captured)"},
		{Code: exitcode.Partial, Text: "partial: the disk (or quota, or file size limit) of -o FILE filled up; the run stopped there, and the observations it had are kept in the file (one line says how many); or no DHT node answered the bootstrap (routers, saved nodes) nor sent a query in the whole run (check the network and --bootstrap): the output, empty, is written"},
		{Code: exitcode.Locked, Text: "its --dht-state is in use by another capture (give captures that run at once their own), or its -o FILE.arrows (or the file its -o - is redirected to) by another writer"},
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); what was received is written and the DHT state saved (an output still blocked 10s after the signal is cut short, and says so)"},
		exitQuietPipe,
	},
	"dedup": {
		exitOK, exitCommitted, exitBadInput,
		{Code: exitcode.Partial, Text: "partial: an input found bad only by reading it after an earlier group of inputs was committed (--batch-hashes), the groups before it committed; or an Arrow file named as INPUT cut mid-message (its writer killed), its whole batches committed; or a file a stream is still being written into (its writer holds its lock), skipped"},
		exitLocked,
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); the message says what was committed (re-run to apply the rest)"},
		exitReportPipe,
	},
	"plan-retries": {
		exitOK, exitCommitted,
		{Code: exitcode.Usage, Text: "usage error or bad input, or -o FILE holds jobs still leased (see --replace); nothing committed but a migration (a writer opening an older format's DIR commits one first)"},
		exitLocked,
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); nothing leased before the commit; after it, one line says how many jobs stay leased, until when"},
		{Code: exitcode.BrokenPipe, Text: `the output's reader went away (e.g. a "| fetch" that exited); one line says what was leased: nothing (the reader gone before the commit, or nothing to lease), or how many jobs stay leased, until when`},
	},
	"fetch": {
		exitOK,
		{Code: exitcode.Error, Text: "error; the -o FILE is not kept"},
		{Code: exitcode.Usage, Text: "usage error or bad jobs input; no results written (a bad row found mid-input may come after attempts: their jobs stay leased until lease_until)"},
		{Code: exitcode.Partial, Text: "partial: --deadline reached, jobs whose lease had expired, no DHT node answered the bootstrap and a job's lookup failed (local_error), or the disk (or quota, or file size limit) of -o FILE filled up; the results are written (those that fit), with a released row for each leased job left (that fits)"},
		{Code: exitcode.Locked, Text: "its --dht-state is in use by another fetch (give fetches that run at once their own), or its -o FILE.arrows (or the file its -o - is redirected to) by another writer"},
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); the results so far are written, with a released row for each leased job left (an output still blocked 10s after the signal is cut short, and says so)"},
		{Code: exitcode.BrokenPipe, Text: `the output's reader went away (e.g. "| head"); nothing is printed, no report written`},
	},
	"merge": {
		exitOK, exitCommitted, exitBadInput,
		{Code: exitcode.Partial, Text: "partial: a results stream cut short, its whole batches applied and committed (the jobs whose rows were cut off stay leased); or a file a stream is still being written into (its writer holds its lock), skipped"},
		{Code: exitcode.Locked, Text: exitLocked.Text + "; --from: OTHER_DIR's writers collected the snapshot being read 10 times in a row"},
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); nothing committed but a migration on open (the message names it), unless the message says what a stream sent was applied"},
		exitReportPipe,
	},
	"export": {
		exitOK,
		{Code: exitcode.Error, Text: "error; a -o FILE is not written"},
		{Code: exitcode.Usage, Text: "usage error or bad input (no dataset in DIR, a bad blocklist)"},
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); a -o FILE is not written, output on stdout is cut short"},
		exitQuietPipe,
	},
	"status": {
		exitOK,
		{Code: exitcode.Error, Text: "error, or --verify found files that do not match the manifest (listed), or DIR/blocklist cannot be read (the report and gauges are written, without the retry waves)"},
		{Code: exitcode.Usage, Text: "usage error or bad input (no dataset in DIR)"},
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM); no report printed"},
		{Code: exitcode.BrokenPipe, Text: `the report's reader went away (e.g. "| head", text or --format json); nothing is printed`},
	},
	"policy": {
		exitOK,
		{Code: exitcode.Error, Text: "error"},
		{Code: exitcode.Usage, Text: "usage error, or a policy that breaks a rule (show: the file; set: the result, then nothing is written)"},
		{Code: exitcode.Locked, Text: "set: dataset locked by another writer (retry later, or use --lock-wait)"},
		{Code: exitcode.Interrupted, Text: "set: interrupted (SIGINT/SIGTERM) while waiting for the lock; nothing written"},
		{Code: exitcode.BrokenPipe, Text: `show: the output's reader went away (e.g. "| head"); nothing is printed`},
	},
	"policy show": {
		exitOK,
		{Code: exitcode.Error, Text: "error"},
		{Code: exitcode.Usage, Text: "usage error, or DIR/policy.json cannot be read or breaks a rule (policy set can repair it)"},
		exitQuietPipe,
	},
	"policy set": {
		{Code: exitcode.OK, Text: "ok: the policy is written"},
		{Code: exitcode.Error, Text: "error"},
		{Code: exitcode.Usage, Text: "usage error, an unknown PATH, or a result that breaks a rule (nothing written)"},
		exitLocked,
		{Code: exitcode.Interrupted, Text: "interrupted (SIGINT/SIGTERM) while waiting for the lock (--lock-wait); nothing written"},
	},
	"clock": {
		{Code: exitcode.OK, Text: "ok: the time is printed"},
		{Code: exitcode.Usage, Text: "--now is not an RFC 3339 time the stages take (or is more than 10 years from the wall clock, without --far-now), --add is not a duration, --started (or --since, its old name) is not an RFC 3339 time or comes without --now, or both are given, or the result is outside the years 0000-9999 (one line says so); or another usage error"},
		exitQuietPipe,
	},
}

// exitHelp is the EXIT STATUS section of command's --help ("policy
// show" for a subcommand).
func exitHelp(command string) string {
	rows, ok := exitRows[command]
	if !ok {
		panic(fmt.Sprintf("app: no EXIT STATUS rows for %q", command))
	}
	return exitcode.Help(rows...)
}
