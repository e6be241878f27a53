package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// unknownFlag rewrites the flag parser's "flag provided but not defined:
// -dat" as "dedup: unknown flag --dat (did you mean --data? ...)": the
// parser names neither the command nor the flag as it was typed, and
// suggests nothing. A one-letter flag run together with its value
// ("-fcsv") is named as typed, with a note that the value goes apart.
// line is the command line as far as the caller knows it (nil: unknown).
// Other usage errors go to otherFlagError.
func unknownFlag(name string, c *cli.Command, line []string, err error) error {
	const prefix = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return otherFlagError(name, msg, err)
	}
	typed := strings.TrimLeft(strings.TrimPrefix(msg, prefix), "-")
	hint, shown := "", asTyped(typed, line)
	if h, ok := notHere[name+" --"+typed]; ok {
		hint = h + "; "
	} else if short, value, ok := joinedShort(typed, c); ok && !strings.HasPrefix(shown, "--") {
		hint = fmt.Sprintf("-%s takes its value as a separate word: -%s %s; ", short, short, value)
	} else if best := closestFlag(typed, c); best != "" {
		hint = "did you mean --" + best + "? "
	}
	return fmt.Errorf("%s: unknown flag %s (%sinfohash %s --help lists them)", name, shown, hint, name)
}

// notHere says why a command lacks a flag its neighbours in a pass take,
// and what to give instead: fetch --data was refused with a guess of
// --deadline.
var notHere = map[string]string{
	"fetch --data": "fetch takes no dataset: it reads JOBS and writes results, which merge --data DIR applies; " +
		"--dht-state DIR/dht-state shares capture's DHT state",
}

// asTyped writes flag with the dashes the user gave it in line ("-fcsv"
// stays "-fcsv"), or as dashed does when line does not hold it.
func asTyped(flag string, line []string) string {
	for _, a := range line {
		if a == "--" {
			break
		}
		bare := strings.TrimLeft(a, "-")
		if n := len(a) - len(bare); n == 1 || n == 2 {
			if before, _, _ := strings.Cut(bare, "="); before == flag {
				return a[:n] + flag
			}
		}
	}
	return dashed(flag)
}

// joinedShort reports whether typed is a one-letter flag of c that takes
// a value, run together with that value ("fcsv": -f and csv).
func joinedShort(typed string, c *cli.Command) (short, value string, ok bool) {
	if len(typed) < 2 {
		return "", "", false
	}
	for _, f := range c.Flags {
		if !slices.Contains(f.Names(), typed[:1]) {
			continue
		}
		if dv, isDocs := f.(cli.DocGenerationFlag); isDocs && dv.TakesValue() {
			return typed[:1], typed[1:], true
		}
	}
	return "", "", false
}

// commandLine returns the longest argument list among cCtx and its
// parents (the command line from the command's name on), or nil.
func commandLine(cCtx *cli.Context) []string {
	if cCtx == nil {
		return nil
	}
	var line []string
	for _, l := range cCtx.Lineage() {
		if args, ok := contextArgs(l); ok && len(args) > len(line) {
			line = args
		}
	}
	return line
}

// contextArgs returns cCtx's arguments; ok is false for a context that
// has no flag set (cli's Args then panics).
func contextArgs(cCtx *cli.Context) (line []string, ok bool) {
	defer func() { _ = recover() }()
	return cCtx.Args().Slice(), true
}

// otherFlagError rewrites the parser's other errors that name neither the
// command nor the flag as typed: "flag needs an argument: -limit" becomes
// "plan-retries: flag needs an argument: --limit (infohash plan-retries
// --help lists them)", with the hint an unknown flag gets (it had none),
// and "Cannot use two forms of the same flag: f format" becomes "export:
// --format and -f are one flag: give it once". Other errors pass through.
func otherFlagError(name, msg string, err error) error {
	if flag, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("%s: flag needs an argument: %s (infohash %s --help lists them)", name, dashed(strings.TrimLeft(flag, "-")), name)
	}
	if forms, ok := strings.CutPrefix(msg, "Cannot use two forms of the same flag: "); ok {
		if later, first, ok := strings.Cut(forms, " "); ok {
			return fmt.Errorf("%s: %s and %s are one flag: give it once", name, dashed(first), dashed(later))
		}
	}
	return err
}

// dashed writes a flag's name as it is typed: -o, --data.
func dashed(flag string) string {
	if len(flag) == 1 {
		return "-" + flag
	}
	return "--" + flag
}

// closestFlag returns the flag name of c nearest to typed: within two
// edits, or one it starts (a shortened name); "" if none is.
func closestFlag(typed string, c *cli.Command) string {
	best, bestD := "", 3
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if len(n) < 2 {
				continue
			}
			d := editDistance(typed, n)
			if strings.HasPrefix(n, typed) && len(typed) >= 2 {
				d = min(d, 1)
			}
			if d < bestD {
				best, bestD = n, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// appUsageError words the flag parser's errors about a flag given before
// the command, as unknownFlag words those after one: "infohash --bogus"
// said "flag provided but not defined: -bogus", with no hint. line is
// the command line (nil: unknown); the parser keeps no copy of it.
func appUsageError(line []string) cli.OnUsageErrorFunc {
	return func(cCtx *cli.Context, err error, _ bool) error {
		return exitcode.BadInput(unknownAppFlag(cCtx.App, line, err))
	}
}

// unknownAppFlag rewrites "flag provided but not defined: -bogus", for a
// flag before the command, as "unknown flag --bogus (infohash --help
// lists them)", hinting, for a command's flag, that it goes after the
// command's name (--keep was "did you mean --help?"), else at the
// nearest of the app's own flags. A value the parser cannot take
// (--help=maybe) is worded as a command's flag's is (badFlagValue).
// Other errors pass through.
func unknownAppFlag(a *cli.App, line []string, err error) error {
	if a == nil {
		return err
	}
	typed, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return badFlagValue("", &cli.Command{Flags: a.Flags}, err)
	}
	typed = strings.TrimLeft(typed, "-")
	shown, hint, help := asTyped(typed, line), "", "infohash --help"
	if cmd := commandAfter(a, line, shown); cmd != nil && defines(cmd, typed) {
		hint = fmt.Sprintf("%s takes it after its name: infohash %s %s ...; ", cmd.Name, cmd.Name, shown)
		help = "infohash " + cmd.Name + " --help"
	} else if slices.ContainsFunc(a.Commands, func(c *cli.Command) bool { return defines(c, typed) }) {
		hint = fmt.Sprintf("a command takes it after its name: infohash COMMAND %s ...; ", shown)
	} else if best := closestFlag(typed, &cli.Command{Flags: a.Flags}); best != "" {
		hint = "did you mean --" + best + "? "
	}
	return fmt.Errorf("unknown flag %s (%s%s lists them)", shown, hint, help)
}

// commandAfter returns the command named in line after the flag shown
// (the first argument there that is a command's name), or nil.
func commandAfter(a *cli.App, line []string, shown string) *cli.Command {
	at := slices.IndexFunc(line, func(s string) bool { return s == shown || strings.HasPrefix(s, shown+"=") })
	if at < 0 {
		return nil
	}
	for _, s := range line[at+1:] {
		if c := a.Command(s); c != nil && !strings.HasPrefix(s, "-") {
			return c
		}
	}
	return nil
}
