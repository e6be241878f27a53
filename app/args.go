package app

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves a subcommand's flags in front of its positional
// arguments, so that "dedup in.parquet --data D" parses like
// "dedup --data D in.parquet" (urfave/cli v2 stops at the first
// positional). A bare "-" is a positional (stdin/stdout); "--" ends flags.
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
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, pos []string
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
		flags = append(flags, s)
		name := strings.TrimLeft(s, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append([]string{}, args[:2]...)
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
