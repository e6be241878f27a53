package app

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/infohash/infohash/internal/exitcode"
)

// lockedHint adds to the message of a run locked out of the dataset
// (exit 75) what to do about it, for a command that can wait for the
// lock: without --lock-wait, that it can; with it, that the lock was
// still held when it ran out. The line alone said "locked by another
// writer (held by …)" in both cases, and only --help named --lock-wait.
func lockedHint(a *cli.App, args []string, err error, msg string) string {
	if !errors.Is(err, exitcode.ErrLocked) || len(args) < 2 || strings.Contains(msg, "--lock-wait") {
		return msg
	}
	cmd := a.Command(args[1])
	if cmd != nil && len(args) > 2 {
		if sub := cmd.Command(args[2]); sub != nil {
			cmd = sub
		}
	}
	if !defines(cmd, "lock-wait") {
		return msg
	}
	if wait, ok := flagArg(args, "lock-wait"); ok {
		return msg + "; still held when --lock-wait " + wait + " ran out"
	}
	return msg + "; retry later, or wait for it with --lock-wait D (such as 10m)"
}

// flagArg returns the value given to --name (or -name) in args, before
// any "--".
func flagArg(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"--" + name, "-" + name} {
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true
			}
			if a == p && i+1 < len(args) {
				return args[i+1], true
			}
		}
	}
	return "", false
}
