package app

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/fsutil"
)

// checkDataOutput vets a command's -o before any work, so that an output
// the data cannot go to fails the run (exit 2) before plan-retries commits
// leases or capture and fetch spend their time: a FILE must be writable,
// and a terminal ("-" with stdout one, or a path naming one: /dev/tty,
// /dev/pts/N, /dev/stdout from one) is refused when format, what the
// command writes to -o, is binary ("Arrow", "Parquet"; "" for text, which
// a terminal shows well enough). capture, fetch and plan-retries wrote
// Parquet onto the terminal of -o /dev/tty, which only export refused.
func checkDataOutput(c *cli.Context, format string) error {
	out := c.String("output")
	if out == "" && !c.IsSet("output") {
		return nil // plan-retries --limit 0 without -o: nothing written
	}
	if format != "" && outputIsTerminal(c, out) {
		named := "" // -o - says nothing more
		if out != "-" {
			named = " (-o " + out + ")"
		}
		return usageError(fmt.Errorf("%s: refusing to write %s to a terminal%s; use -o FILE or pipe it%s",
			c.Command.Name, format, named, terminalHint[c.Command.Name]))
	}
	if out == "-" {
		return nil
	}
	if err := fsutil.CheckOutput(out); err != nil {
		return usageError(fmt.Errorf("%s: -o: %w", c.Command.Name, err))
	}
	return checkNotDatasetFile(c, c.Command.Name+": -o", out)
}

// stageFormat is what capture, fetch and plan-retries write to -o out:
// an Arrow IPC stream to stdout or a FILE named *.arrows or *.arrow
// (isStreamName; plan-retries refuses such a FILE but for a FIFO or
// device), else Parquet.
func stageFormat(out string) string {
	if out == "-" || isStreamName(out) {
		return "Arrow"
	}
	return "Parquet"
}

// outputIsTerminal reports whether out, a command's -o, writes to a
// terminal: "-" with stdout one, or a path naming one (/dev/stdout or
// /dev/fd/1 from a terminal, /dev/tty, /dev/pts/N).
func outputIsTerminal(c *cli.Context, out string) bool {
	if out == "-" {
		return isTerminal(c.App.Writer)
	}
	return isTerminalPath(out)
}

// binaryFormats names export's binary formats, which a terminal is spared.
var binaryFormats = map[string]string{"parquet": "Parquet", "arrow": "Arrow"}

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var terr error
	if err := rc.Control(func(fd uintptr) { _, terr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil {
		return false
	}
	return terr == nil
}
