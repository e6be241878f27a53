// Package app is infohash's command line: it parses flags into each
// stage's Options, runs the stage, reports its counters and maps the
// result to an exit status. Stages live in pipeline/; data formats in
// formats/.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/interrupt"
)

// commands lists the subcommands once, in data-flow order.
func commands() []*cli.Command {
	return []*cli.Command{
		captureCommand(),
		dedupCommand(),
		planRetriesCommand(),
		fetchCommand(),
		mergeCommand(),
		exportCommand(),
		statusCommand(),
		policyCommand(),
	}
}

// New builds the cli.App. stdin/stdout/stderr are the process streams
// (tests pass buffers).
func New(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	cmds := append(commands(), helperCommands()...)
	for _, c := range cmds {
		wire(c, c.Name)
		for _, s := range c.Subcommands {
			wire(s, c.Name)
		}
	}
	return &cli.App{
		Name:    "infohash",
		Version: version(),
		Usage:   "crawl the BitTorrent DHT as batch passes over Parquet snapshots",
		UsageText: `infohash COMMAND [flags] [args]

   infohash capture --duration 10m -o - | infohash dedup --data /srv/ih -
   infohash plan-retries --data /srv/ih -o - | infohash fetch - -o - | infohash merge --data /srv/ih -
   infohash export --data /srv/ih --table state --format csv -o state.csv`,
		Description:    "The stages (capture → dedup → plan-retries → fetch → merge → export) pass Parquet\nfiles, or Arrow IPC streams on pipes, from one to the next; export also writes csv,\njsonl, magnet links and es-bulk.\n\n" + exitcode.Help(exitcode.Generic...),
		Commands:       cmds,
		Reader:         stdin,
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // Main maps errors to codes
		// Reached only when no command is named ("infohash" alone: help
		// flags and unknown commands are handled before): a usage error,
		// one line saying where the help is (not the help itself).
		Action: func(c *cli.Context) error {
			return exitcode.BadInput(errors.New("no command given; run 'infohash --help' for the commands"))
		},
		OnUsageError: appUsageError(nil),
	}
}

// noMetrics names the commands that have no counters for --metrics-file
// (policy and clock run no stage).
var noMetrics = map[string]bool{"policy": true, "clock": true}

// wire gives a command (or subcommand of top) what every one shares: the
// common flags, usage errors as exit 2, and, before it runs, logging set
// up and its flags' values checked (validate.go).
func wire(c *cli.Command, top string) {
	if defines(c, "now") {
		c.Flags = append(c.Flags, farNowFlag)
	}
	for _, f := range commonFlags(top) {
		if !noMetrics[top] || !strings.HasPrefix(f.Names()[0], "metrics-") {
			c.Flags = append(c.Flags, f)
		}
	}
	c.HideHelpCommand = true // urfave/cli v2.27 mis-resolves "cmd --help" on leaf commands otherwise
	name := top
	if c.Name != top {
		name = top + " " + c.Name
	}
	c.OnUsageError = func(cCtx *cli.Context, err error, _ bool) error {
		return exitcode.BadInput(badFlagValue(name, c, unknownFlag(name, c, commandLine(cCtx), err)))
	}
	if c.Before == nil {
		c.Before = beforeCommand
	}
	reportsOnEveryExit(c)
}

// Main runs the command line and returns the process exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	signal.Ignore(syscall.SIGPIPE) // a closed pipe becomes a write error, not a silent death
	// As signal.NotifyContext, numbering the signals too: deliver and the
	// stream grace tell a second signal from the first by its number.
	ctx, stop := interrupt.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdin, stdout, stderr)
}

// run is Main under ctx, which SIGINT/SIGTERM cancel.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := New(stdin, stdout, stderr)
	a.OnUsageError = appUsageError(args) // the flag parser keeps no line
	args, unknown := helpAsFlag(a, args)
	if unknown == "" && len(args) > 1 && !strings.HasPrefix(args[1], "-") && a.Command(args[1]) == nil {
		unknown = args[1]
	}
	if unknown != "" {
		fmt.Fprintf(stderr, "infohash: unknown command %q (infohash --help lists them)\n", unknown)
		return exitcode.Usage
	}
	err := a.RunContext(ctx, reorderArgs(a, args))
	if err == nil {
		return exitcode.OK
	}
	code := exitStatus(ctx, err)
	if code == exitcode.BrokenPipe {
		// "infohash export -o - | head": the reader has what it wanted.
		// Like a tool killed by SIGPIPE, say nothing on a terminal; the
		// status tells a pipeline that wanted everything. A log shipper
		// still gets its record of how the run ended.
		if jsonLogs(args) {
			slog.New(slog.NewJSONHandler(stderr, nil)).Info("infohash: the output's reader went away (broken pipe)", "exit", code)
		}
		return code
	}
	msg := err.Error()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg = interruptedMessage(msg, args)
	}
	msg = withCommand(a, args, msg)
	msg = lockedHint(a, args, err, msg)
	if jsonLogs(args) {
		// One record like every other line on stderr, for log shippers.
		slog.New(slog.NewJSONHandler(stderr, nil)).Error("infohash: "+msg, "exit", code)
		return code
	}
	fmt.Fprintf(stderr, "infohash: %s\n", oneLine(msg))
	return code
}

// helpAsFlag rewrites "infohash help [CMD [SUB]]" (or "h", the alias
// the help lists) as "infohash [CMD [SUB]] --help", so that both ask for
// the same help: urfave/cli's own help command was not reached through
// its alias ("unknown command"), showed policy's help for "help policy
// set", and answered an unknown topic with exit 1 (its "No help topic"
// exit 3) where an unknown command is a usage error (exit 2). unknown is
// the CMD named that is no command ("" if none).
func helpAsFlag(a *cli.App, args []string) (out []string, unknown string) {
	if len(args) < 2 || (args[1] != "help" && args[1] != "h") {
		return args, ""
	}
	topic := args[2:]
	if len(topic) > 0 && (topic[0] == "help" || topic[0] == "h") {
		topic = topic[1:] // "help help": the help there is, the app's
	}
	if len(topic) == 0 || strings.HasPrefix(topic[0], "-") {
		return []string{args[0], "--help"}, ""
	}
	if a.Command(topic[0]) == nil {
		return args, topic[0]
	}
	return append(append([]string{args[0]}, topic...), "--help"), ""
}

// withCommand starts msg with the command args run ("dedup: ", "policy
// set: ") unless it starts with that command's name already ("dedup: ",
// "merge --from: ", or "policy: " for policy set): errors of the shared
// layers reach every command as those wrote them, the dataset's
// ("dataset: DIR: locked by another writer", "dataset: mkdir
// DIR/staging/...: permission denied") among them. The help command's
// errors, and those of no command, are left as they are.
func withCommand(a *cli.App, args []string, msg string) string {
	if len(args) < 2 {
		return msg
	}
	cmd := a.Command(args[1])
	if cmd == nil || cmd.Name == "help" {
		return msg
	}
	name := cmd.Name
	if len(args) > 2 {
		if sub := cmd.Command(args[2]); sub != nil {
			name += " " + sub.Name
		}
	}
	// "NAME: ", or "NAME " ("merge --from: ", "policy set: ").
	if strings.HasPrefix(msg, cmd.Name+": ") || strings.HasPrefix(msg, cmd.Name+" ") {
		return msg
	}
	return name + ": " + msg
}

// jsonLogs reports whether args ask for JSON logs (--log-format json).
func jsonLogs(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--log-format=json", a == "-log-format=json":
			return true
		case (a == "--log-format" || a == "-log-format") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// interruptedMessage says "interrupted" where an error a signal caused
// says "context canceled", naming the command when nothing else does.
func interruptedMessage(msg string, args []string) string {
	msg = strings.Replace(msg, context.Canceled.Error(), "interrupted", 1)
	if msg == "interrupted" && len(args) > 1 {
		msg = args[1] + ": interrupted"
	}
	return msg
}

// interrupted reports whether err is the cancellation that SIGINT or
// SIGTERM caused.
func interrupted(c *cli.Context, err error) bool {
	return err != nil && c.Context.Err() != nil && errors.Is(err, context.Canceled)
}

// isUsage recognises the flag parser's own errors, which urfave/cli does
// not type.
func isUsage(err error) bool {
	var ee cli.ExitCoder
	if errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"flag provided but not defined", "invalid value", "Required flag", "No help topic"} {
		if contains(msg, s) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
