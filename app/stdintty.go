package app

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/urfave/cli/v2"
)

// stdinHints says, for each command that reads "-" from stdin, what to
// pipe into it.
var stdinHints = map[string]string{
	"dedup": "pipe observations in (capture -o - | dedup --data D -) or name a file",
	"fetch": "pipe jobs in (plan-retries --data D -o - | fetch - -o FILE) or name a file",
	"merge": "pipe results in (fetch JOBS -o - | merge --data D -) or name a file",
}

// checkStdin refuses "-" among inputs when stdin is a terminal: dedup,
// fetch and merge read a stream or a list there, which a person does not
// type; they waited in silence and, on Ctrl-C, said stdin was empty. A
// usage error (exit 2), before anything is opened or made.
func checkStdin(c *cli.Context, inputs []string) error {
	if !slices.Contains(inputs, "-") || !stdinIsTerminal(c.App.Reader) {
		return nil
	}
	return usageError(fmt.Errorf("%s: stdin is a terminal: %s", c.Command.Name, stdinHints[c.Command.Name]))
}

// stdinIsTerminal reports whether r, the command's stdin, is a terminal.
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}
