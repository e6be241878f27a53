package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/clock"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/metrics"
)

// commonFlags are added to every command (top names it, or the command
// above a subcommand).
func commonFlags(top string) []cli.Flag {
	but := "a usage error (bad flags or arguments: nothing is written)"
	if takesOutput[top] {
		but = "a usage error (bad flags, arguments or -o: nothing is written)"
	}
	if quietOnPipe[top] {
		but += " or 141"
	}
	mUsage := "write the run's counters, duration and exit status as a Prometheus text file to `PATH` (node_exporter textfile collector; - for stdout), " +
		"on every exit but " + but + ", with no counters when the run ended before counting (locked out, bad input); " +
		"its last_success_timestamp_seconds moves only when the run exits 0 (else: the replaced file's)"
	if reportsOnStdout[top] { // checkReportPath refuses "-" there
		mUsage = "write the report's numbers and the run's duration as a Prometheus text file to `PATH` (node_exporter textfile collector; a file or FIFO, not -: the report is on stdout)"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "write the logs on stderr as `text|json`"},
		&cli.BoolFlag{Name: "debug", Usage: "also log debug records: what each step read and did, and how long it took (fetch: every attempt; capture: every node)"},
		&cli.StringFlag{Name: "metrics-file", Usage: mUsage, Action: checkReportPath("metrics-file")},
		&cli.StringSliceFlag{Name: "metrics-label", Usage: "add the label `NAME=VALUE` to every series of --metrics-file (repeat it, or separate them with commas), " +
			"so that the files of two datasets can share one textfile folder; NAME is not __*, nor a label the series use (" +
			strings.Join(metrics.Reserved, ", ") + ")", Action: checkMetricsLabels},
	}
}

// checkMetricsLabels vets --metrics-label as soon as the flags are
// parsed: a bad one is a usage error (exit 2), before the run does
// anything.
func checkMetricsLabels(c *cli.Context, v []string) error {
	if _, err := metrics.ParseLabels(v); err != nil {
		return badFlag(c, "--metrics-label %w", err)
	}
	return nil
}

// labelMetrics adds the --metrics-label labels to b, a metrics file.
func labelMetrics(c *cli.Context, b []byte) ([]byte, error) {
	l, err := metrics.ParseLabels(c.StringSlice("metrics-label"))
	if err != nil {
		return nil, err
	}
	return metrics.AddLabels(b, l)
}

// statsJSONFlag is the --stats-json flag of a stage. locks says that the
// stage takes a lock (the dataset's, or capture's and fetch's
// --dht-state), so that a run can end locked out (75) before it counts:
// export takes none, and its help used to say it could.
func statsJSONFlag(locks bool) *cli.StringFlag {
	early := "bad input, an error or a signal before its end"
	if locks {
		early = "locked out, " + early
	}
	return &cli.StringFlag{Name: "stats-json", Usage: "also write the run's counters and exit_status (the status it exits with, " +
		"3 partial and 130 interrupted included) as JSON to `FILE` (- for stdout), on every exit --metrics-file is written on; " +
		"only {\"exit_status\": N} when the run ended before writing its counters (" + early + ")",
		Action: checkReportPath("stats-json")}
}

// checkReportPath vets --stats-json or --metrics-file (name) as soon as
// the flags are parsed, so that a path the report cannot be written to is
// a usage error before the run commits anything, not an error after. "-"
// is stdout, and refused when the command's data (-o -) or the other
// report already goes there; a file is refused when it is also the -o
// file, an input or the other report's (the report, written last, would
// replace it).
func checkReportPath(name string) func(*cli.Context, string) error {
	return func(c *cli.Context, p string) error {
		switch {
		case p == "":
			return nil
		case p != "-":
			if err := fsutil.CheckOutput(p); err != nil {
				return badFlag(c, "--%s: %w", name, err)
			}
			if err := checkNotDatasetFile(c, "--"+name, p); err != nil {
				return err
			}
			// Written after the data, the report would replace it.
			if out := c.String("output"); out != "" && out != "-" && sameTarget(p, out) {
				return badFlag(c, "--%s: %s is also the output (-o); name another file", name, p)
			}
			for _, in := range c.Args().Slice() { // dedup's, merge's, fetch's inputs
				if in != "-" && sameTarget(p, in) {
					return badFlag(c, "--%s: %s is also an input; name another file", name, p)
				}
			}
			other := map[string]string{"stats-json": "metrics-file", "metrics-file": "stats-json"}[name]
			if o := c.String(other); o != "" && o != "-" && sameTarget(p, o) {
				return badFlag(c, "--%s: %s is also --%s; name another file", name, p, other)
			}
			return nil
		case c.String("output") == "-":
			how := "-o -"
			if !c.IsSet("output") {
				how = "no -o FILE given" // export's default
			}
			return badFlag(c, "--%s -: the command's data goes to stdout (%s); name a file for one of them", name, how)
		case c.Command != nil && reportsOnStdout[c.Command.Name]:
			return badFlag(c, "--%s -: %s prints its report on stdout; name a file", name, c.Command.Name)
		case c.String("stats-json") == "-" && c.String("metrics-file") == "-":
			return badFlag(c, "--stats-json - and --metrics-file -: only one of them can go to stdout")
		}
		return nil
	}
}

// sameTarget reports whether paths a and b name the same regular file,
// or the same new one, however spelt: sameFile (fetch.go), except that a
// FIFO or device, written in place, may take both.
func sameTarget(a, b string) bool {
	if fi, err := os.Stat(a); err == nil && !fi.Mode().IsRegular() {
		return false
	}
	return sameFile(a, b)
}

// reportsOnStdout names the commands whose data always goes to stdout
// (status prints its report there): a report cannot go there too.
var reportsOnStdout = map[string]bool{"status": true}

// takesOutput names the commands with an -o, whose refusal is a usage
// error too (the --metrics-file help of the others names none).
var takesOutput = map[string]bool{"capture": true, "plan-retries": true, "fetch": true, "export": true}

// checkNotDatasetFile refuses an output path p (what names it:
// "--stats-json") that is a file the dataset of --data, or the dataset p
// lies in, manages (CURRENT, a manifest,
// policy.json, a table's file…) or lies in capture's --dht-state, however
// spelt (symbolic links, ".."): writing it would break the dataset for
// every later command. The rest of DIR (DIR/export/) is the user's.
func checkNotDatasetFile(c *cli.Context, what, p string) error {
	// The dataset of --data, and the one p lies in (fetch and capture
	// take no --data; the path may name another dataset).
	enclosing, _ := dataset.Enclosing(p)
	for _, data := range []string{c.String("data"), enclosing} {
		if data == "" {
			continue
		}
		if rel, ok := dataset.Owns(data, p); ok {
			return usageError(fmt.Errorf("%s %s: that is the dataset's own %s (in %s); write elsewhere, e.g. under %s",
				what, p, ownedName(rel), data, underAsGiven(data, "export")))
		}
	}
	if st := c.String("dht-state"); st != "" {
		if _, ok := dataset.Contains(st, p); ok {
			return usageError(fmt.Errorf("%s %s: that is in the --dht-state directory %s; write elsewhere", what, p, st))
		}
	}
	return nil
}

// ownedName describes dataset-relative path rel for an error.
func ownedName(rel string) string {
	if rel == "." {
		return "directory"
	}
	return rel
}

// dataFlag names the dataset directory.
var dataFlag = &cli.StringFlag{Name: "data", Usage: "dataset `DIR`", EnvVars: []string{"INFOHASH_DATA"}}

// requireData returns --data or a usage error.
func requireData(c *cli.Context) (string, error) {
	d := c.String("data")
	if d == "" {
		return "", badFlag(c, "--data DIR (or INFOHASH_DATA) is required")
	}
	return d, nil
}

// nowFlag fixes the clock for reproducible runs (status: the time its
// counts are taken at).
var nowFlag = &cli.StringFlag{Name: "now", Usage: "use `TIME` (RFC 3339) as the current time " +
	"(live leases, overdue retries, retry waves), for reproducible runs; " + nowBounds, DefaultText: wallClock}

// wallClock is the default every --now shows in --help.
const wallClock = "the wall clock"

// nowBounds says which --now is taken, for the flag's help.
var nowBounds = fmt.Sprintf("at most %d years from the wall clock unless --far-now", nowFarYears)

// nowFlagOf is a stage's --now: it sets only that run's own clock, whose
// uses moves lists. Times the stage reads from its inputs (capture's
// observed_at, fetch's attempted_at: each by the clock of the run that
// wrote it) and what it derives from them keep theirs.
func nowFlagOf(moves string) *cli.StringFlag {
	return &cli.StringFlag{Name: "now", Usage: "use `TIME` (RFC 3339) as this run's clock, for reproducible runs: " + moves +
		"; " + nowBounds + ", and a warning when more than 1 day ahead of it", DefaultText: wallClock}
}

func setupLogging(c *cli.Context) error {
	lvl := slog.LevelInfo
	if c.Bool("debug") {
		lvl = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch c.String("log-format") {
	case "text", "":
		h = slog.NewTextHandler(c.App.ErrWriter, opts)
	case "json":
		h = slog.NewJSONHandler(c.App.ErrWriter, opts)
	default:
		return exitcode.BadInput(fmt.Errorf("--log-format %q: want text or json", c.String("log-format")))
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// farNowFlag goes with every --now (wire adds it): checkNow refuses a
// --now more than nowFarYears from the wall clock without it.
var farNowFlag = &cli.BoolFlag{Name: "far-now", Usage: fmt.Sprintf("take a --now more than %d years from the wall clock "+
	"(replaying old archives, long simulations), which is otherwise refused as a likely typo", nowFarYears)}

// nowWriters are the commands that commit times reckoned from --now
// (leases, penalties, new hashes' next_retry), which runs on the wall
// clock read as they stand: parseNow warns when --now is more than
// nowAheadWarn ahead.
var nowWriters = map[string]bool{"dedup": true, "plan-retries": true, "merge": true}

// nowAheadWarn is how far ahead of the wall clock a writer's --now may be
// without a warning: more than clock skew and time zones, less than
// any simulation of days ahead.
const nowAheadWarn = 24 * time.Hour

// parseNow returns --now, or the wall clock. It warns once when a
// writer's --now is more than nowAheadWarn ahead of the wall clock.
func parseNow(c *cli.Context) (time.Time, error) {
	s := c.String("now")
	if s == "" {
		return time.Now().UTC(), nil
	}
	t, problem := parseNowTime(s)
	if problem != "" {
		return time.Time{}, badFlag(c, "--now: %q %s", s, problem)
	}
	name := commandName(c)
	if wall := time.Now(); nowWriters[name] && t.After(wall.Add(nowAheadWarn)) {
		slog.Warn(fmt.Sprintf("%s: --now %s is %s ahead of the wall clock: the leases, penalties and retry times this run commits "+
			"are reckoned from it, so runs on the wall clock see them as not yet due, or still held, until then", name, s,
			showGap(wall, t)), "now", t.UTC().Format(time.RFC3339Nano))
	}
	return t.UTC(), nil
}

// parseNowTime parses a --now TIME: RFC 3339 that, in UTC as the stages
// write their times, falls within the years 0000-9999 RFC 3339 can write
// (9999-12-31T23:30:00-01:00 is in the year 10000 in UTC, which clock
// printed as 10000-01-01T00:30:00Z and nothing parsed back). problem is
// what is wrong, following the quoted value in an error; "" if nothing.
func parseNowTime(s string) (t time.Time, problem string) {
	t, err := parseRFC3339(s)
	if err != nil {
		return time.Time{}, "is not an RFC 3339 time: " + timeParseReason(err)
	}
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Sprintf("is in the year %d in UTC, outside the years 0000-9999 that RFC 3339 can write", y)
	}
	return t, ""
}

// parseRFC3339 parses s as RFC 3339 (time.RFC3339Nano), taking its "T"
// and "Z" in lower case too, as RFC 3339 section 5.6 allows ("t", "z")
// and Go's layout does not.
func parseRFC3339(s string) (time.Time, error) {
	if len(s) > 10 && s[10] == 't' {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	return time.Parse(time.RFC3339Nano, s)
}

// timeParseReason says in a few words why time.Parse refused a value as
// RFC 3339: Go's own reason when it has one ("day out of range"), else
// which part it wanted where, in words rather than Go's layout digits.
func timeParseReason(err error) string {
	var pe *time.ParseError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	if pe.Message != "" {
		return strings.TrimPrefix(pe.Message, ": ")
	}
	part, ok := map[string]string{
		"2006":   "the year (4 digits)",
		"01":     "the month (2 digits)",
		"02":     "the day (2 digits)",
		"T":      `"T" and the time of day`,
		"15":     "the hour (2 digits)",
		"04":     "the minute (2 digits)",
		"05":     "the second (2 digits)",
		"Z07:00": "the zone (Z or ±hh:mm)",
	}[pe.LayoutElem]
	if !ok {
		part = strconv.Quote(pe.LayoutElem)
	}
	if pe.ValueElem == "" {
		return "missing " + part
	}
	at := pe.ValueElem
	if r := []rune(at); len(r) > 20 {
		at = string(r[:20]) + "…"
	}
	return fmt.Sprintf("want %s at %q", part, at)
}

// runningNowFlag is the --now of capture and fetch (parseClock): a clock
// that starts at TIME and runs on; uses lists what it stamps and decides.
// checkNow bounds it as every --now; parseNow does not warn when it is
// ahead (nowWriters), which the help says with the reason.
func runningNowFlag(uses string) *cli.StringFlag {
	return &cli.StringFlag{Name: "now", Usage: "start this run's clock at `TIME` (RFC 3339) and run it at the wall clock's pace, " +
		"to replay or simulate a pass: " + uses + "; " + nowBounds + "; no warning when more than 1 day ahead of it, " +
		"unlike dedup, plan-retries and merge: this run commits nothing, and the dedup or merge applying its output reads " +
		"a time over 5m past its own clock as that clock (and warns)", DefaultText: wallClock}
}

// parseClock returns the clock of a stage that runs for a while (capture,
// fetch): with --now TIME (parsed as parseNow does), one that starts at
// TIME and advances at the wall clock's pace; else the wall clock.
func parseClock(c *cli.Context) (clock.Clock, error) {
	if c.String("now") == "" {
		return clock.Wall(), nil
	}
	t, err := parseNow(c)
	if err != nil {
		return clock.Clock{}, err
	}
	return clock.StartingAt(t), nil
}

// secondsAttr is the "seconds" attribute of a stage's final log record:
// a number, as in --stats-json (a JSON log used to get the string
// "0.02"), rounded to hundredths so that a text log stays short.
func secondsAttr(s float64) slog.Attr {
	return slog.Float64("seconds", math.Round(s*100)/100)
}

// started is when the command began (for run durations).
var started = time.Now()

// writeStatsJSON writes v to --stats-json and --metrics-file when given,
// and returns the error the run ends with: end(nil), or end of the error
// writing a report. end maps that error (nil when both were written) to
// how the run ends, as the caller would combine it with the run's own;
// it is called more than once, so it must only compute. --stats-json
// holds v's counters and exit_status, the status of end(nil)
// (exitStatus): the one the process exits with, unless writing a report
// fails (a --stats-json that cannot be written is not there to say
// otherwise; a --metrics-file that then fails makes it 1 or the
// error's). It used to hold counters alone, which read as a success
// after a partial (3) or interrupted (130) run.
// --stats-json is written first, so that the metrics record that end:
// their exit status is the run's, and unless it is 0 they keep the last
// success time of the file they replace (lastSuccess); written first,
// they said exit 0 for a run that a --stats-json it could not write
// then ended with exit 1. - is stdout; a file goes through
// fsutil.CreateOutput (replaced atomically, a symbolic link's target,
// with the umask's mode), a FIFO or device is written in place. Either
// is written under deliver (writeReport), so that a FIFO no reader
// opens, or a stdout no reader takes, does not hold the process past a
// signal.
func writeStatsJSON(c *cli.Context, v any, end func(reportErr error) error) error {
	var jerr error
	if p := c.String("stats-json"); p != "" {
		noteReportTried(c.Context, "stats-json")
		b, err := withExitStatus(v, exitStatus(c.Context, end(nil)))
		if err == nil {
			err = writeReport(c, "stats-json", p, append(b, '\n'))
		}
		jerr = err
	}
	ended := end(jerr)
	if c.String("metrics-file") == "" {
		return ended
	}
	err := writeMetrics(c, v, exitStatus(c.Context, ended))
	switch {
	case err == nil:
		return ended
	case jerr != nil:
		return ended // the first report's error says it already
	}
	return end(err)
}

// writeMetrics writes v, the run's counters, to --metrics-file with the
// status the run exits with (exitStatus): unless it is 0, with the last
// success time of the file it replaces (lastSuccess). It notes in the
// run's context that the file was tried (reportOnEveryExit).
func writeMetrics(c *cli.Context, v any, exit int) error {
	noteReportTried(c.Context, "metrics-file")
	p := c.String("metrics-file")
	run := metrics.Run{Duration: time.Since(started), At: time.Now(), Exit: exit}
	if run.Exit != exitcode.OK {
		run.LastSuccess = lastSuccess(c.Command.Name, p)
	}
	b, err := metrics.Render(c.Command.Name, v, run)
	if err == nil {
		b, err = labelMetrics(c, b)
	}
	if err == nil {
		err = writeReport(c, "metrics-file", p, b)
	}
	return err
}

// lastSuccess returns the last success time in the metrics file of
// command at path, 0 for none: a regular file only (a FIFO or device is
// not read back), its first 1 MiB.
func lastSuccess(command, path string) float64 {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return metrics.LastSuccess(b, command)
}

// writeReport writes b to path, or to stdout for "-", for the flag named
// flag. A FIFO, device or stdout is written under deliver: after a
// signal, an open that no reader answers or a write that no reader takes
// ends the command (exit 130, one line naming the flag) once it has
// been blocked for streamGrace, or at a second signal.
func writeReport(c *cli.Context, flag, path string, b []byte) error {
	err := deliver(c.Context, c.Command.Name+" --"+flag, path, c.App.Writer, func(dst output) error {
		if path == "-" {
			if _, err := dst.stdout.Write(b); err != nil {
				return fmt.Errorf("stdout: %w", err)
			}
			return nil
		}
		f, err := dst.open(path)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Abort()
			return err
		}
		return f.Commit()
	})
	if err != nil && !errors.Is(err, errUndelivered) {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	return err
}
