package app

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
)

// stdinHints says, for each command that reads "-" from stdin, what to
// pipe into it.
var stdinHints = map[string]string{
	"dedup": "pipe observations in (capture -o - | dedup --data D -) or name a file",
	"fetch": "pipe jobs in (plan-retries --data D -o - | fetch - -o FILE) or name a file",
	"merge": "pipe results in (fetch JOBS -o - | merge --data D -) or name a file",
}

// checkStdin refuses a terminal among inputs: "-" when stdin is one, or
// an input named by path that is one (/dev/tty, /dev/pts/N, /dev/stdin
// when stdin is a terminal). dedup, fetch and merge read a stream or a
// list there, which a person does not type; they waited in silence and,
// on Ctrl-C, said stdin was empty (a named one was even spooled into
// DIR/inbox/). A usage error (exit 2) naming the first such input, before
// anything is opened or made; a FIFO, a pipe or a regular file (stdin
// redirected from one, named /dev/stdin) is read as before. A named
// input that is not there is refused too, in the same words for the
// three commands (missingInput).
func checkStdin(c *cli.Context, inputs []string) error {
	cmd := c.Command.Name
	for _, in := range inputs {
		switch {
		case in == "-":
			if stdinIsTerminal(c.App.Reader) {
				return usageError(fmt.Errorf("%s: stdin is a terminal: %s", cmd, stdinHints[cmd]))
			}
		case isTerminalPath(in):
			return usageError(fmt.Errorf("%s: %s is a terminal: %s", cmd, in, stdinHints[cmd]))
		default:
			if err := missingInput(cmd, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// stdinIsTerminal reports whether r, the command's stdin, is a terminal.
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}

// isTerminalPath reports whether path names a terminal: a character
// device that answers a terminal's ioctl (what isatty asks). Only a
// character device is opened, and so that opening it neither waits (a
// serial line without carrier) nor makes it the controlling terminal; a
// FIFO is not opened (that would wait for its writer). One that cannot
// be opened (/dev/tty without a controlling terminal) is left to the
// command's own open to report.
func isTerminalPath(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		return false
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	_, err = unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
