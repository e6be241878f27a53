package app

import (
	"strings"
	"testing"
)

// TestUnknownFlag: a mistyped flag is named as typed, with the command
// and the nearest flag there is, on one line, exit 2; one before the
// command is worded alike, a command's flag there with where it goes.
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
		{[]string{"dedup", "--data", "d", "x", "-y"}, "dedup: unknown flag -y ("},
		// A one-letter flag run together with its value, named as typed.
		{[]string{"export", "-fcsv"}, "export: unknown flag -fcsv (-f takes its value as a separate word: -f csv; infohash export --help"},
		{[]string{"export", "--fcsv"}, "export: unknown flag --fcsv (infohash export --help lists them)"},
		{[]string{"export", "-datax"}, "export: unknown flag -datax (did you mean --data?"},
		{[]string{"policy", "set", "-dta=x"}, "policy set: unknown flag -dta (did you mean --data?"},
		// A flag of the pass's other steps: say what the command takes instead.
		{[]string{"fetch", "--data", "d", "-o", "-", "x"}, "fetch: unknown flag --data (fetch takes no dataset: it reads JOBS and writes results, " +
			"which merge --data DIR applies; --dht-state DIR/dht-state shares capture's DHT state; infohash fetch --help lists them)"},
		// Before the command: "infohash --bogus" said "flag provided but
		// not defined: -bogus", with no hint.
		{[]string{"--bogus"}, "infohash: unknown flag --bogus (infohash --help lists them)\n"},
		{[]string{"-x", "dedup"}, "infohash: unknown flag -x (infohash --help lists them)\n"},
		{[]string{"--verison"}, "infohash: unknown flag --verison (did you mean --version? infohash --help lists them)\n"},
		{[]string{"--keep", "2", "dedup", "--data", "d", "x"}, "infohash: unknown flag --keep (dedup takes it after its name: infohash dedup --keep ...; " +
			"infohash dedup --help lists them)\n"},
		{[]string{"-data=d", "status"}, "infohash: unknown flag -data (status takes it after its name: infohash status -data ...; infohash status --help lists them)\n"},
		{[]string{"--debug"}, "infohash: unknown flag --debug (a command takes it after its name: infohash COMMAND --debug ...; infohash --help lists them)\n"},
	} {
		stdout, stderr, code := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestFlagErrorsNameCommand: the parser's other usage errors (a flag
// given no value, a flag given in two spellings) name the command and the
// flag as typed, on one line, exit 2 ("infohash: flag needs an argument:
// -limit" named neither); a flag given no value gets an unknown flag's
// hint, where the help lists the flags (it had none).
func TestFlagErrorsNameCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan-retries", "--data", "x", "--limit"}, "infohash: plan-retries: flag needs an argument: --limit (infohash plan-retries --help lists them)\n"},
		{[]string{"dedup", "--data"}, "infohash: dedup: flag needs an argument: --data (infohash dedup --help lists them)\n"},
		{[]string{"export", "--data", "x", "-o"}, "infohash: export: flag needs an argument: -o (infohash export --help lists them)\n"},
		{[]string{"policy", "set", "--data"}, "infohash: policy set: flag needs an argument: --data (infohash policy set --help lists them)\n"},
		{[]string{"export", "--data", "x", "-f", "csv", "--format", "jsonl", "-o", "-"}, "infohash: export: --format and -f are one flag: give it once\n"},
	} {
		stdout, stderr, code := runMain(t, tc.args...)
		if code != 2 || stderr != tc.want || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestBadFlagValue: a numeric, size or boolean flag given a value it
// cannot take names the command (none for a flag before it), the flag
// as typed, the value and what it wants, on one line, exit 2. --help
// (-h) given no boolean is such a flag: before a command it printed the
// parser's `invalid boolean value "maybe" for -help: parse error`, and
// after one it was taken for help (exit 0).
func TestBadFlagValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan-retries", "--data", "x", "--limit", "abc", "-o", "j"}, `plan-retries: --limit "abc": want a whole number` + "\n"},
		{[]string{"plan-retries", "--data", "x", "--limit=99999999999999999999", "-o", "j"}, `plan-retries: --limit "99999999999999999999": out of range; want a whole number` + "\n"},
		{[]string{"plan-retries", "--data", "x", "--seed", "-1", "-o", "j"}, `plan-retries: --seed "-1": want a whole number, 0 or more` + "\n"},
		{[]string{"fetch", "--max-metadata-size", "10MiB", "x", "-o", "y"}, `fetch: --max-metadata-size "10MiB": want a whole number of bytes (no units: 10MiB is 10485760)` + "\n"},
		{[]string{"fetch", "--dht-rate", "fast", "x", "-o", "y"}, `fetch: --dht-rate "fast": want a number` + "\n"},
		{[]string{"fetch", "--no-dht=maybe", "x", "-o", "y"}, `fetch: --no-dht "maybe": want true or false` + "\n"},
		{[]string{"policy", "show", "--data", "x", "--hash=maybe"}, `policy show: --hash "maybe": want true or false` + "\n"},
		{[]string{"--help=maybe"}, `infohash: --help "maybe": want true or false` + "\n"},
		{[]string{"-h=1x"}, `infohash: -h "1x": want true or false` + "\n"},
		{[]string{"--version=maybe"}, `infohash: --version "maybe": want true or false` + "\n"},
		{[]string{"dedup", "--help=maybe"}, `infohash: dedup: --help "maybe": want true or false` + "\n"},
		{[]string{"dedup", "x.parquet", "-h=maybe", "--data", "x"}, `infohash: dedup: -h "maybe": want true or false` + "\n"},
		{[]string{"policy", "show", "--help=maybe"}, `infohash: policy show: --help "maybe": want true or false` + "\n"},
	} {
		stdout, stderr, code := runMain(t, tc.args...)
		if code != 2 || !strings.HasSuffix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line ending %q", tc.args, code, stderr, tc.want)
		}
	}
}
