package app

import (
	"strings"
	"testing"
)

// TestUnknownFlag: a mistyped flag is named as typed, with the command
// and the nearest flag there is, on one line, exit 2.
func TestUnknownFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dedup", "--dat", "x", "y"}, "dedup: unknown flag --dat (did you mean --data? infohash dedup --help lists them)"},
		{[]string{"export", "--fromat", "csv"}, "export: unknown flag --fromat (did you mean --format?"},
		{[]string{"fetch", "-o", "-", "--concurency", "5", "x"}, "fetch: unknown flag --concurency (did you mean --concurrency?"},
		{[]string{"policy", "set", "--dta", "x"}, "policy set: unknown flag --dta (did you mean --data?"},
		{[]string{"dedup", "--zzzzzz", "1"}, "dedup: unknown flag --zzzzzz (infohash dedup --help lists them)"},
	} {
		stdout, stderr, code := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
