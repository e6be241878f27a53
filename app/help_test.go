package app

import (
	"bytes"
	"strings"
	"testing"
)

// helpOf returns the help text of a command path ("plan-retries",
// "policy show").
func helpOf(t *testing.T, path ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	args := append(append([]string{"infohash"}, path...), "--help")
	if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%s --help: exit %d: %s", strings.Join(path, " "), code, errb.String())
	}
	return out.String()
}

// TestHelpDefaultsOnce checks that no flag states its default twice (a
// hand-written "(default: ...)" in Usage plus urfave/cli's own) and that
// flags whose default comes from the policy say so.
func TestHelpDefaultsOnce(t *testing.T) {
	for _, c := range commands() {
		paths := [][]string{{c.Name}}
		for _, s := range c.Subcommands {
			paths = append(paths, []string{c.Name, s.Name})
		}
		for _, p := range paths {
			for _, line := range strings.Split(helpOf(t, p...), "\n") {
				if strings.Count(line, "default") > 1 {
					t.Errorf("%s: default stated twice: %q", strings.Join(p, " "), line)
				}
			}
		}
	}
	tests := []struct{ cmd, flag, want string }{
		{"plan-retries", "--new-share", "(default: the policy's plan.new_share, 0.5 unless changed)"},
		{"plan-retries", "--lease", "(default: the policy's plan.lease, 2h unless changed)"},
		{"plan-retries", "--seed", "(default: the policy's seed, 0 unless changed)"},
		{"dedup", "--half-life", "(default: the policy's plan.activity_half_life, 1d unless changed)"},
		{"dedup", "--batch-hashes", "(default: "},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+tt.flag, func(t *testing.T) {
			for _, line := range strings.Split(helpOf(t, tt.cmd), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), tt.flag+" ") {
					if !strings.Contains(line, tt.want) {
						t.Fatalf("%q lacks %q", line, tt.want)
					}
					return
				}
			}
			t.Fatalf("%s --help lists no %s", tt.cmd, tt.flag)
		})
	}
}

// TestHelpOffersStdoutOnlyWhereFree: --metrics-file and --stats-json
// offer "-" (stdout) in --help only on commands that take it; status
// prints its report there and refuses "-".
func TestHelpOffersStdoutOnlyWhereFree(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.Subcommands) > 0 {
				return // policy: no reports
			}
			seen := 0
			for _, line := range strings.Split(helpOf(t, c.Name), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 || (f[0] != "--metrics-file" && f[0] != "--stats-json") || (f[1] != "FILE" && f[1] != "PATH") {
					continue
				}
				seen++
				offers := strings.Contains(line, "- for stdout")
				if offers == reportsOnStdout[c.Name] {
					t.Errorf("%s %s: offers - for stdout: %v; want %v", c.Name, f[0], offers, !offers)
				}
			}
			if seen == 0 {
				t.Errorf("%s --help lists no report flag", c.Name)
			}
		})
	}
}
