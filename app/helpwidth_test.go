package app

import (
	"strings"
	"testing"
)

// maxHelpLine bounds a line of a command's --help description: the
// paragraphs are wrapped at 76 characters (fetch's at 90), and a line an
// edit left unwrapped ran to 150 in a terminal of 80.
const maxHelpLine = 100

// TestHelpProseWidth: every line of every command's and subcommand's
// --help description, as printed, is at most maxHelpLine characters
// (capture, dedup, plan-retries, fetch, merge and status each had lines
// of 102 to 150 where an edit had joined or lengthened a line).
func TestHelpProseWidth(t *testing.T) {
	var paths [][]string
	for _, c := range append(commands(), helperCommands()...) {
		paths = append(paths, []string{c.Name})
		for _, s := range c.Subcommands {
			paths = append(paths, []string{c.Name, s.Name})
		}
	}
	for _, p := range paths {
		name := strings.Join(p, " ")
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, append(p, "--help")...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			_, desc, ok := strings.Cut(stdout, "\nDESCRIPTION:\n")
			if !ok {
				t.Fatalf("no DESCRIPTION in:\n%s", stdout)
			}
			desc, _, _ = strings.Cut(desc, "\nOPTIONS:")
			desc, _, _ = strings.Cut(desc, "\nCOMMANDS:")
			for i, line := range strings.Split(desc, "\n") {
				if len(line) > maxHelpLine {
					t.Errorf("description line %d has %d characters: %q", i+1, len(line), line)
				}
			}
		})
	}
}
