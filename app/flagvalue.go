package app

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagParseError matches the flag parser's error for a value it cannot
// parse: `invalid value "abc" for flag -limit: parse error`, or for a
// boolean `invalid boolean value "x" for -no-dht: parse error`.
var flagParseError = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^\s:]+): (.*)$`)

// badFlagValue rewrites the flag parser's error for a value it cannot
// parse as `plan-retries: --limit "abc": want a whole number`: the parser
// names neither the command nor what the flag takes, and writes the flag
// with one dash. A flag given before any command (name "": the app's,
// such as --help=maybe) reads `--help "maybe": want true or false`.
// Other errors pass through.
func badFlagValue(name string, c *cli.Command, err error) error {
	m := flagParseError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, flag, cause := m[1], m[2], m[3]
	want := "want " + flagWants(c, flag)
	if strings.Contains(cause, "out of range") {
		want = "out of range; " + want
	}
	if name == "" {
		return fmt.Errorf("%s %s: %s", dashed(flag), value, want)
	}
	return fmt.Errorf("%s: %s %s: %s", name, dashed(flag), value, want)
}

// flagWants says what the flag called name of c takes, for badFlagValue.
// Sizes are plain byte counts, as everywhere in infohash (no units).
func flagWants(c *cli.Command, name string) string {
	i := slices.IndexFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
	if i < 0 {
		return "a valid value"
	}
	f := c.Flags[i]
	bytes := false
	if d, ok := f.(cli.DocGenerationFlag); ok {
		bytes = strings.Contains(d.GetUsage(), "`BYTES`")
	}
	switch f.(type) {
	case *cli.BoolFlag:
		return "true or false"
	case *cli.Float64Flag:
		return "a number"
	case *cli.Uint64Flag, *cli.UintFlag:
		return "a whole number, 0 or more"
	case *cli.IntFlag, *cli.Int64Flag:
		if bytes {
			return "a whole number of bytes (no units: 10MiB is 10485760)"
		}
		return "a whole number"
	}
	return "a valid value"
}
