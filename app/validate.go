package app

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/dhtboot"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/capture"
	"github.com/infohash/infohash/pipeline/fetch"
	"github.com/infohash/infohash/pipeline/schedule"
)

// flagChecks validate flags by name, in every command that defines them,
// before the command does any work (they run in its Before). Each check
// returns what is wrong with the value as given, or "". A flag left out
// keeps its default, which is not checked.
var flagChecks = []struct {
	name  string
	check func(c *cli.Context, name string) string
}{
	// dedup: a zero or negative half-life makes activity grow with age;
	// the policy's own plan.activity_half_life refuses both.
	{"half-life", checkPositive},
	// plan-retries: a lease that has already ended leases nothing (as
	// one under schedule.MinLease does: lease_until is in ms); one
	// over schedule.MaxLease (a typo such as 5000w) would keep a killed
	// fetch's hashes from every plan for years.
	{"lease", func(c *cli.Context, name string) string {
		if p := checkPositive(c, name); p != "" {
			return p
		}
		if d := flagDuration(c, name); d > schedule.MaxLease {
			return fmt.Sprintf("%s is longer than %s", showDuration(d), showDuration(schedule.MaxLease))
		} else if d < schedule.MinLease { // lease_until is in milliseconds: it would end as planned
			return fmt.Sprintf("%s is shorter than %s", showDuration(d), showDuration(schedule.MinLease))
		}
		return ""
	}},
	// dedup, merge, plan-retries: the snapshot being committed is one of
	// the kept ones (formats/dataset would quietly read 0 as 3).
	{"keep", func(c *cli.Context, name string) string {
		if n := c.Int(name); n < 1 {
			return fmt.Sprintf("%d is less than 1 (the snapshot just committed is always kept)", n)
		}
		return ""
	}},
	{"lock-wait", checkNotNegative},
	// dedup: 0 means one commit; a negative bound used to mean one too.
	{"batch-hashes", func(c *cli.Context, name string) string {
		if n := c.Int64(name); n < 0 {
			return fmt.Sprintf("%d is negative", n)
		}
		return ""
	}},
	// capture: the run's stops (0: no limit). capture.Run checks them
	// too, for the package's callers, but only once -o is created.
	{"duration", checkNotNegative},
	{"max-observations", func(c *cli.Context, name string) string {
		if n := c.Int64(name); n < 0 {
			return fmt.Sprintf("%d is negative", n)
		}
		return ""
	}},
	{"node-ids", func(c *cli.Context, name string) string {
		if n := c.Int(name); n < 1 || n > capture.MaxNodeIDs {
			return fmt.Sprintf("%d is outside 1-%d", n, capture.MaxNodeIDs)
		}
		return ""
	}},
	// capture: after --node-ids, which it depends on. capture.Run checked
	// it only after looking up the --bootstrap routers (a bad --dht-listen
	// read as their DNS failure) and said "--dht-listen \":65536\"" for a
	// --dht-listen :65535 --node-ids 2. fetch's one node is checked here
	// and by fetch.Options.Validate (for the package's callers), which said
	// "address abc: missing port in address"; all word it alike
	// (dhtboot.ListenProblem).
	{"dht-listen", func(c *cli.Context, name string) string {
		if !defines(c.Command, "node-ids") {
			if c.String(name) == "" {
				return "" // fetch's "": a free port, as Validate allows
			}
			return dhtboot.ListenProblem(c.String(name))
		}
		return capture.ListenProblem(c.String(name), c.Int("node-ids"))
	}},
	// fetch: fetch.Options.Validate checks these too, for the package's
	// callers; here they read as every other flag's.
	{"concurrency", func(c *cli.Context, name string) string {
		if n := c.Int(name); n < 1 || n > fetch.MaxConcurrency {
			return fmt.Sprintf("%d is outside 1-%d", n, fetch.MaxConcurrency)
		}
		return ""
	}},
	{"peers-per-hash", func(c *cli.Context, name string) string {
		if n := c.Int(name); n < 1 {
			return fmt.Sprintf("%d is less than 1", n)
		}
		return ""
	}},
	{"timeout", checkPositive},
	{"peer-timeout", checkPositive},
	{"connect-timeout", checkPositive},
	{"deadline", checkNotNegative},
	{"max-metadata-size", func(c *cli.Context, name string) string {
		if n := c.Int64(name); n < 1 || n > fetch.MaxMetadataSizeLimit {
			return fmt.Sprintf("%d is outside 1-%d (1 GiB)", n, fetch.MaxMetadataSizeLimit)
		}
		return ""
	}},
	{"metadata-memory", func(c *cli.Context, name string) string {
		if n := c.Int64(name); n < 0 {
			return fmt.Sprintf("%d is negative", n)
		}
		return ""
	}},
	// Every command: a --data that names a file failed later with
	// "open FILE/policy.json: not a directory", naming no flag.
	{"data", func(c *cli.Context, name string) string {
		if fi, err := os.Stat(c.String(name)); err == nil && !fi.IsDir() {
			return fmt.Sprintf("%s is a file, not a dataset folder", c.String(name))
		}
		// A dangling symbolic link: dedup could not make its folder
		// (mkdir sees the link) and failed with "open DIR: no such file
		// or directory", exit 1.
		// (A writer's DIR inside another dataset: checkNested.)
		return danglingLink(c.String(name))
	}},
	// capture, fetch: only the state folder itself may be new, as with
	// dedup's --data. A missing parent was made (mkdir -p), so a mistyped
	// --dht-state grew a tree and a cold state nobody reads; a dangling
	// symbolic link failed as an error (exit 1). The default under
	// capture's --data is checked with --data.
	{"dht-state", func(c *cli.Context, name string) string {
		dir := c.String(name)
		if msg := danglingLink(dir); msg != "" {
			return msg
		}
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "" // there: Lock tells a file from a folder
		}
		parent := filepath.Dir(filepath.Clean(dir))
		if fi, err := os.Stat(parent); err != nil {
			return fmt.Sprintf("%s: no such folder, and its parent folder %s does not exist to create it in", dir, parent)
		} else if !fi.IsDir() {
			return fmt.Sprintf("%s: no such folder, and %s is not a folder to create it in", dir, parent)
		}
		return ""
	}},
	// fetch: an endpoint that cannot be dialled fails every attempt and
	// is penalised as a peer.
	{"peer", func(c *cli.Context, name string) string {
		for _, p := range c.StringSlice(name) {
			if msg := checkHostPort(p); msg != "" {
				return fmt.Sprintf("%q: %s", p, msg)
			}
			// merge refuses a peer_failures endpoint with a space or a
			// newline, which would reject the whole results file.
			if !schema.PeerAddrOK(p) {
				return fmt.Sprintf("%q: not an endpoint merge accepts (UTF-8, no spaces or newlines, at most 262 bytes)", p)
			}
		}
		return ""
	}},
	// capture, fetch: a router that cannot be dialled (port 0, no port)
	// was skipped in silence or failed every lookup as local_error.
	// --bootstrap "" (none) stays allowed.
	{"bootstrap", func(c *cli.Context, name string) string {
		for _, p := range dhtboot.Parse(c.StringSlice(name)) {
			if msg := checkHostPort(p); msg != "" {
				return fmt.Sprintf("%q: %s", p, msg)
			}
		}
		return ""
	}},
	// capture and fetch --dht-rate (capture's alias --max-rps): fetch's 0
	// means no limit, capture's is refused; NaN and negative rates used to
	// mean no limit too.
	{"dht-rate", checkRate},
	// dedup: a rate of 0 or 1 (or NaN, which the check used to let
	// through) sizes no Bloom filter: NaN panicked making one.
	{"bloom-fp", func(c *cli.Context, name string) string {
		if p := c.Float64(name); !(p > 0 && p < 1) {
			return fmt.Sprintf("%v is not between 0 and 1 (both excluded)", p)
		}
		return ""
	}},
	// plan-retries: a share of --limit (plan.Run checks it too, for
	// callers of the package, but only once the output is open).
	{"new-share", func(c *cli.Context, name string) string {
		if f := c.Float64(name); !(f >= 0 && f <= 1) {
			return fmt.Sprintf("%v is outside [0, 1]", f)
		}
		return ""
	}},
	// plan-retries: at most this many jobs (plan.Run checks it too, for
	// callers of the package).
	{"limit", func(c *cli.Context, name string) string {
		if n := c.Int(name); n < 0 {
			return fmt.Sprintf("%d is negative", n)
		}
		return ""
	}},
	{"es-index", func(c *cli.Context, name string) string { return esIndexProblem(c.String(name)) }},
	{"now", checkNow},
}

// A --now further than nowFarYears from the wall clock, either way, is
// refused unless --far-now is given: "plan-retries --now 9999-12-31T..."
// committed leases that real-time runs counted as live for good. Tests
// and demos run days or months ahead; archives replayed at their own
// time go back a few years.
const nowFarYears = 10

// checkNow checks --now: an RFC 3339 time, within nowFarYears of the
// wall clock unless --far-now.
func checkNow(c *cli.Context, name string) string {
	s := c.String(name)
	if s == "" {
		return "empty; give an RFC 3339 time, or leave the flag out for the wall clock"
	}
	t, problem := parseNowTime(s)
	if problem != "" {
		return fmt.Sprintf("%q %s", s, problem)
	}
	wall := time.Now()
	side := ""
	switch {
	case c.Bool(farNowFlag.Name):
	case t.After(wall.AddDate(nowFarYears, 0, 0)):
		side = "after"
	case t.Before(wall.AddDate(-nowFarYears, 0, 0)):
		side = "before"
	}
	if side != "" {
		return fmt.Sprintf("%q is more than %d years %s the wall clock (%s): a mistyped year? Give --%s too if it is meant",
			s, nowFarYears, side, wall.UTC().Format(time.RFC3339), farNowFlag.Name)
	}
	return ""
}

// danglingLink says so when path is a symbolic link to nothing ("" if
// it is not one).
func danglingLink(path string) string {
	target, err := os.Readlink(path)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("%s is a symbolic link to %s, which does not exist", path, target)
	}
	return ""
}

// checkPositive checks a duration flag that must be more than zero.
func checkPositive(c *cli.Context, name string) string {
	if d := flagDuration(c, name); d <= 0 {
		return showDuration(d) + " is not positive"
	}
	return ""
}

// checkNotNegative checks a duration flag that may be 0 but not less.
func checkNotNegative(c *cli.Context, name string) string {
	if d := flagDuration(c, name); d < 0 {
		return showDuration(d) + " is negative"
	}
	return ""
}

// checkRate checks a queries-per-second flag: not negative (checkFloat
// has refused NaN and the infinities). capture's 0 is refused too: it
// meant no limit, and one writing it to turn the crawl off got the most
// crawling instead (--passive turns it off).
func checkRate(c *cli.Context, name string) string {
	r := c.Float64(name)
	switch {
	case r < 0:
		return fmt.Sprintf("%v is negative", r)
	case r == 0 && commandName(c) == "capture":
		return "0 would not turn the crawl off (that is --passive) but lift its limit; give a rate above 0"
	}
	return ""
}

// checkFloat says what is wrong with the value of a number flag that no
// flag takes: NaN and the infinities, which compare false (NaN) or pass
// a bound on one side only, and -0, which passes "not negative" while
// its sign says otherwise (0 means "no limit" to the rates).
func checkFloat(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("%v is not a finite number", v)
	case v == 0 && math.Signbit(v):
		return "-0 is a negative zero; write 0 if 0 is meant"
	}
	return ""
}

// checkFlags checks that every duration flag parsed (checkDurations) and
// every number flag set is a finite number (checkFloat), then runs
// flagChecks on the flags c's command defines and the user set, and
// returns the first problem as a usage error naming the flag.
func checkFlags(c *cli.Context) error {
	if err := checkDurations(c); err != nil {
		return err
	}
	if c.Command != nil {
		for _, f := range c.Command.Flags {
			if ff, ok := f.(*cli.Float64Flag); ok && c.IsSet(ff.Name) {
				if msg := checkFloat(c.Float64(ff.Name)); msg != "" {
					return exitcode.BadInput(fmt.Errorf("--%s: %s", ff.Name, msg))
				}
			}
		}
	}
	for _, fc := range flagChecks {
		if !defines(c.Command, fc.name) || !c.IsSet(fc.name) {
			continue
		}
		if msg := fc.check(c, fc.name); msg != "" {
			return exitcode.BadInput(fmt.Errorf("--%s: %s", fc.name, msg))
		}
	}
	// Not urfave/cli's Required: on a missing required flag it prints the
	// command's help on stdout, which in "capture | dedup -" went down
	// the pipe as input. After the values given: a wrong one is the
	// problem to fix first (plan-retries --limit -1 said "-o is required",
	// and once given -o, that --limit was negative).
	if c.Command != nil && outputRequired[c.Command.Name] && !c.IsSet("output") && !dryRun(c) {
		return exitcode.BadInput(errors.New("-o is required: -o FILE for a Parquet file, or -o - for an Arrow IPC stream on stdout"))
	}
	return checkNested(c)
}

// checkNested refuses a writer's --data inside another dataset (D/inbox,
// D/staging/x, however spelt): the outer one's runs took the inner one's
// files for their leftovers and its staging folder for debris
// (dataset.Nested; dataset.Open refuses it too).
func checkNested(c *cli.Context) error {
	data := c.String("data")
	if data == "" || !defines(c.Command, "data") || !writesData[commandName(c)] {
		return nil
	}
	if outer, ok := dataset.Nested(data); ok {
		return exitcode.BadInput(fmt.Errorf("--data %s: inside the dataset %s; choose a folder outside it", data, outer))
	}
	return nil
}

// writesData names the commands that make or write into --data (capture
// its default --dht-state): a DIR inside another dataset is refused.
var writesData = map[string]bool{"capture": true, "dedup": true, "plan-retries": true, "merge": true, "policy set": true}

// outputRequired names the commands that must be told where to write
// (-o): their output is their whole point.
var outputRequired = map[string]bool{"capture": true, "fetch": true, "plan-retries": true}

// dryRun reports whether c is plan-retries --limit 0, a dry run that
// plans nothing: -o may be left out, and then nothing is written.
func dryRun(c *cli.Context) bool {
	return c.Command.Name == "plan-retries" && c.IsSet("limit") && c.Int("limit") == 0
}

// defines reports whether cmd has a flag called name.
func defines(cmd *cli.Command, name string) bool {
	if cmd == nil {
		return false
	}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// checkHostPort says what is wrong with s as a HOST:PORT to dial, or "".
// A host alone says the port is missing ("8.8.8.8" was only "not
// HOST:PORT"), and an IPv6 address without brackets that they go round
// it. Nothing is looked up.
func checkHostPort(s string) string {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		var ae *net.AddrError
		switch {
		case s == "":
		case net.ParseIP(s) != nil && strings.Contains(s, ":"):
			return "not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT"
		case errors.As(err, &ae) && ae.Err == "missing port in address":
			return "missing port: want HOST:PORT"
		}
		return "not HOST:PORT"
	}
	if host == "" {
		return "no host"
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Sprintf("port %q is not a number", port)
	}
	if n < 1 || n > 65535 {
		return fmt.Sprintf("port %d is outside 1-65535", n)
	}
	return ""
}

// beforeCommand sets up logging and checks the flags. Its errors start
// with the command's name, as the command's own do ("dedup: --keep: ...").
func beforeCommand(c *cli.Context) error {
	err := setupLogging(c)
	if err == nil {
		err = checkFlags(c)
	}
	if err != nil && commandName(c) != "" {
		return fmt.Errorf("%s: %w", commandName(c), err)
	}
	return err
}

// commandName names c's command as it is typed ("dedup", "policy set"),
// or "" outside a command.
func commandName(c *cli.Context) string {
	if c.Command == nil {
		return ""
	}
	if c.App != nil {
		if n, ok := strings.CutPrefix(c.Command.HelpName, c.App.HelpName+" "); ok {
			return n
		}
	}
	return c.Command.Name
}

// badFlag is a usage error about a flag of c's command, which the
// message names: it starts with the command's name, as beforeCommand's.
func badFlag(c *cli.Context, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	if n := commandName(c); n != "" {
		err = fmt.Errorf("%s: %w", n, err)
	}
	return usageError(err)
}
