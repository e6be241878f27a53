package app

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves a subcommand's flags in front of its positional
// arguments, so that "dedup in.parquet --data D" parses like
// "dedup --data D in.parquet" (urfave/cli v2 stops at the first
// positional). A bare "-" is a positional (stdin/stdout); "--" ends flags.
//
// A command with subcommands (policy show|set) takes the first positional
// that names one as the subcommand, and the flags go after it.
//
// --help or -h anywhere before "--" asks for the (sub)command's help: the
// result is then just "CMD [SUB] --help" (urfave/cli v2 would read the
// positionals left in front of it as help topics, "No help topic for
// 'x.parquet'").
func reorderArgs(a *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range a.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, c := range append([]*cli.Command{cmd}, cmd.Subcommands...) {
		for _, f := range c.Flags {
			_, isBool := f.(*cli.BoolFlag)
			for _, n := range f.Names() {
				takesValue[n] = !isBool
			}
		}
	}
	var flags, pos []string
	help := false
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		if s == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if len(s) < 2 || s[0] != '-' {
			pos = append(pos, s)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(s, "-"), "=")
		if isHelp(name, value, hasValue) {
			help = true
			continue
		}
		flags = append(flags, s)
		if hasValue {
			continue
		}
		if takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append([]string{}, args[:2]...)
	if len(cmd.Subcommands) > 0 && len(pos) > 0 && cmd.Command(pos[0]) != nil {
		out = append(out, pos[0])
		pos = pos[1:]
	}
	if help {
		return append(out, "--help")
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

// isHelp reports whether flag name (with its "=value", if any) asks for
// help: -h, --help, --help=true; --help=false does not, nor does a value
// that is no boolean (--help=maybe), which is left to the flag parser to
// refuse as any bad value is (badFlagValue: exit 2, one line).
func isHelp(name, value string, hasValue bool) bool {
	if name != "help" && name != "h" {
		return false
	}
	if !hasValue {
		return true
	}
	b, err := strconv.ParseBool(value)
	return err == nil && b
}
