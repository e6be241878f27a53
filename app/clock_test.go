package app

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestClock: infohash clock takes and refuses the --now values the
// stages do, with their one-line error and exit 2, reading no dataset,
// and prints the time in UTC; infohash --help lists it. The
// fixed dates are the point (what clock prints for each); --far-now takes
// them when the wall clock has gone more than 10 years past them.
func TestClock(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dataset")
	for _, tt := range []struct {
		name, now, want string // want: stdout, or "" for a refused --now
	}{
		{"UTC", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z\n"},
		{"offset", "2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05Z\n"},
		{"fraction", "2026-01-02T03:04:05.25Z", "2026-01-02T03:04:05.25Z\n"},
		// RFC 3339 section 5.6 allows "t" and "z"; Go's layout does not.
		{"lower case t and z", "2026-01-02t03:04:05z", "2026-01-02T03:04:05Z\n"},
		{"lower case t, offset", "2026-01-02t05:04:05+02:00", "2026-01-02T03:04:05Z\n"},
		{"lower case z, fraction", "2026-01-02T03:04:05.25z", "2026-01-02T03:04:05.25Z\n"},
		{"space for T", "2026-01-02 03:04:05Z", ""},
		{"z after an offset", "2026-01-02T03:04:05+02:00z", ""},
		{"word", "yesterday", ""},
		{"no such day", "2026-02-30T00:00:00Z", ""},
		{"hour 24", "2026-01-02T24:00:00Z", ""},
		{"no zone", "2026-01-02T03:04:05", ""},
		{"date only", "2026-01-02", ""},
		{"empty", "", ""},
		// RFC 3339 both, but in the years 10000 and -1 in UTC, which
		// clock printed as 10000-01-01T00:30:00Z and -0001-12-31T23:30:00Z.
		{"year 10000 in UTC", "9999-12-31T23:30:00-01:00", ""},
		{"year -1 in UTC", "0000-01-01T00:30:00+01:00", ""},
		{"year 9999 in UTC", "9999-12-31T23:30:00+01:00", "9999-12-31T22:30:00Z\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, "clock", "--now", tt.now, "--far-now")
			// status parses --now before it looks for the dataset.
			_, statusErr, statusCode := runMain(t, "status", "--data", missing, "--now", tt.now, "--far-now")
			if tt.want != "" {
				if code != 0 || stdout != tt.want || stderr != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout, stderr, tt.want)
				}
				if strings.Contains(statusErr, "--now") {
					t.Fatalf("status refuses --now %q, which clock takes: %s", tt.now, statusErr)
				}
				return
			}
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--now: ") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line about --now", code, stdout, stderr)
			}
			// The same line, but for the command's name at its start.
			if statusCode != 2 || strings.TrimPrefix(statusErr, "infohash: status") != strings.TrimPrefix(stderr, "infohash: clock") {
				t.Fatalf("status --now %q: exit %d, %q; clock said %q", tt.now, statusCode, statusErr, stderr)
			}
		})
	}

	stdout, stderr, code := runMain(t, "clock")
	got, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(stdout))
	if code != 0 || err != nil || time.Since(got).Abs() > time.Minute || got.Location() != time.UTC {
		t.Errorf("clock without --now: exit %d, %q (%v), stderr %q; want the wall clock in UTC", code, stdout, err, stderr)
	}
	if _, stderr, code := runMain(t, "clock", "2026-01-02T03:04:05Z"); code != 2 || !strings.Contains(stderr, "--now TIME") {
		t.Errorf("clock with an argument: exit %d, %q; want 2 pointing at --now", code, stderr)
	}
	// dedup, plan-retries, fetch and merge --help send the reader to
	// "infohash clock --started": infohash --help lists it.
	if help, _, _ := runMain(t, "--help"); !regexp.MustCompile(`(?m)^   clock +print `).MatchString(help) {
		t.Errorf("infohash --help does not list the clock command:\n%s", help)
	}
	if help := helpOf(t, "clock"); !strings.Contains(help, "EXIT STATUS:") {
		t.Errorf("clock --help has no EXIT STATUS:\n%s", help)
	}
}

// TestClockAdd: --add moves --now (or the wall clock) by a duration as
// the duration flags take it, backwards when negative, and prints the
// result as clock prints any time; a bad duration, or a result RFC 3339
// cannot write, is one line and exit 2. Scripts use it instead of GNU
// date -d. Every case gives --far-now: the fixed dates are the point, and
// the years 0000 and 9999 are far from any wall clock.
func TestClockAdd(t *testing.T) {
	for _, tt := range []struct {
		name, now, add string
		want           string // stdout, or "" for a refusal
		wantErr        string // the one line on stderr when refused
	}{
		{name: "hours", now: "2026-01-02T03:04:05Z", add: "3h", want: "2026-01-02T06:04:05Z\n"},
		{name: "Go's compound form", now: "2026-01-02T03:04:05Z", add: "1h30m", want: "2026-01-02T04:34:05Z\n"},
		{name: "negative", now: "2026-01-02T03:04:05Z", add: "-90m", want: "2026-01-02T01:34:05Z\n"},
		{name: "plus sign", now: "2026-01-02T03:04:05Z", add: "+1s", want: "2026-01-02T03:04:06Z\n"},
		{name: "days", now: "2026-02-28T12:00:00Z", add: "1d", want: "2026-03-01T12:00:00Z\n"},
		{name: "back a day over a year", now: "2026-01-01T00:00:00Z", add: "-1d", want: "2025-12-31T00:00:00Z\n"},
		{name: "zero", now: "2026-01-02T03:04:05Z", add: "0s", want: "2026-01-02T03:04:05Z\n"},
		{name: "offset to UTC", now: "2026-01-02T05:04:05+02:00", add: "1h", want: "2026-01-02T04:04:05Z\n"},
		{name: "fraction kept", now: "2026-01-02T03:04:05.25Z", add: "1.5s", want: "2026-01-02T03:04:06.75Z\n"},
		{name: "words", now: "2026-01-02T03:04:05Z", add: "3 hours", wantErr: `infohash: clock: --add: "3 hours": want a duration such as 90m, 2h or 1d` + "\n"},
		{name: "no unit", now: "2026-01-02T03:04:05Z", add: "3", wantErr: `infohash: clock: --add: "3": want a duration such as 90m, 2h or 1d` + "\n"},
		{name: "empty", now: "2026-01-02T03:04:05Z", add: "", wantErr: `infohash: clock: --add: "": want a duration such as 90m, 2h or 1d` + "\n"},
		{name: "past year 9999", now: "9999-12-31T23:00:00Z", add: "2h", wantErr: "infohash: clock: --add 2h moves the time out of the years 0000-9999 that RFC 3339 can write\n"},
		{name: "before year 0000", now: "0000-01-01T01:00:00Z", add: "-2h", wantErr: "infohash: clock: --add -2h moves the time out of the years 0000-9999 that RFC 3339 can write\n"},
		{name: "bad --now first", now: "2026-02-30T00:00:00Z", add: "1h", wantErr: `infohash: clock: --now: "2026-02-30T00:00:00Z" is not an RFC 3339 time: day out of range` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, "clock", "--now", tt.now, "--add", tt.add, "--far-now")
			if tt.want != "" {
				if code != 0 || stdout != tt.want || stderr != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout, stderr, tt.want)
				}
				return
			}
			if code != 2 || stdout != "" || stderr != tt.wantErr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tt.wantErr)
			}
		})
	}

	// Without --now, --add moves the wall clock (what date -d "+3 hours" did).
	stdout, stderr, code := runMain(t, "clock", "--add", "3h")
	got, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(stdout))
	if code != 0 || err != nil || time.Until(got.Add(-3*time.Hour)).Abs() > time.Minute {
		t.Errorf("clock --add 3h: exit %d, %q (%v), stderr %q; want the wall clock plus 3 hours", code, stdout, err, stderr)
	}
	if help := helpOf(t, "clock"); !strings.Contains(help, "--add") {
		t.Errorf("clock --help shows no --add example:\n%s", help)
	}
}

// TestNowReason: a --now that does not parse gets one line that keeps
// Go's reason in a short form, the same from clock as from a stage.
func TestNowReason(t *testing.T) {
	for _, tt := range []struct{ name, now, reason string }{
		{"bad month", "2026-13-01T00:00:00Z", "month out of range"},
		{"day out of range", "2026-02-30T00:00:00Z", "day out of range"},
		{"hour 24", "2026-01-02T24:00:00Z", "hour out of range"},
		{"missing zone", "2026-01-02T03:04:05", "missing the zone (Z or ±hh:mm)"},
		{"date only", "2026-01-02", `missing "T" and the time of day`},
		{"short month", "2026-1-02T03:04:05Z", `want the month (2 digits) at "1-02T03:04:05Z"`},
		{"space for T", "2026-01-02 03:04:05Z", `want "T" and the time of day at " 03:04:05Z"`},
		{"zone without colon", "2026-01-02T03:04:05+0200", `want the zone (Z or ±hh:mm) at "+0200"`},
		{"trailing text", "2026-01-02T03:04:05Z!", `extra text: "!"`},
		{"garbage", "yesterday", `want the year (4 digits) at "yesterday"`},
		{"long garbage", "next tuesday around noon", `want the year (4 digits) at "next tuesday around …"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := fmt.Sprintf(": --now: %q is not an RFC 3339 time: %s\n", tt.now, tt.reason)
			if _, stderr, code := runMain(t, "clock", "--now", tt.now); code != 2 || stderr != "infohash: clock"+want {
				t.Errorf("clock: exit %d, stderr %q; want 2 and %q", code, stderr, "infohash: clock"+want)
			}
			missing := filepath.Join(t.TempDir(), "no-such-dataset")
			if _, stderr, code := runMain(t, "status", "--data", missing, "--now", tt.now); code != 2 || stderr != "infohash: status"+want {
				t.Errorf("status: exit %d, stderr %q; want 2 and %q", code, stderr, "infohash: status"+want)
			}
		})
	}
}

// TestClockStarted: --started WALL moves --now on by the wall-clock time
// elapsed since WALL, as a clock that read --now at WALL reads now
// (crawl-pass.sh's steps' --now), and by nothing when WALL is later; with
// --add it moves by both. Without --now, or with a WALL that does not
// parse, it is one line and exit 2. --since, its first name, works as it
// did (scripts pass it) and is named so in errors, but --help shows only
// --started: export's --since is a filter on last_seen, another thing.
func TestClockStarted(t *testing.T) {
	now := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Second)
	at := now.Format(time.RFC3339)
	for _, flag := range []string{"--started", "--since"} {
		for _, tt := range []struct {
			name     string
			args     []string
			min, max time.Duration // the printed time less --now
		}{
			{"2s ago", []string{flag, time.Now().Add(-2 * time.Second).Format(time.RFC3339Nano)}, 2 * time.Second, 2*time.Second + time.Minute},
			{"an offset", []string{flag, time.Now().Add(-time.Hour).In(time.FixedZone("", -5*3600)).Format(time.RFC3339Nano)}, time.Hour, time.Hour + time.Minute},
			{"later than the wall clock", []string{flag, time.Now().Add(time.Hour).Format(time.RFC3339Nano)}, 0, 0},
			{"and --add", []string{flag, time.Now().Add(-2 * time.Second).Format(time.RFC3339Nano), "--add", "1h"}, time.Hour + 2*time.Second, time.Hour + 2*time.Second + time.Minute},
		} {
			t.Run(flag+" "+tt.name, func(t *testing.T) {
				stdout, stderr, code := runMain(t, append([]string{"clock", "--now", at}, tt.args...)...)
				got, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(stdout))
				if code != 0 || err != nil || stderr != "" {
					t.Fatalf("exit %d, stdout %q (%v), stderr %q", code, stdout, err, stderr)
				}
				if d := got.Sub(now); d < tt.min || d > tt.max {
					t.Errorf("clock --now %s %v printed %s: %v later, want %v to %v", at, tt.args, stdout, d, tt.min, tt.max)
				}
			})
		}
		for _, tt := range []struct {
			name    string
			args    []string
			wantErr string
		}{
			{"without --now", []string{flag, "2026-01-02T03:04:05Z"}, "infohash: clock: " + flag + " needs --now: the wall clock has already moved on since 2026-01-02T03:04:05Z\n"},
			{"not a time", []string{"--now", at, flag, "yesterday"}, `infohash: clock: ` + flag + `: "yesterday" is not an RFC 3339 time: want the year (4 digits) at "yesterday"` + "\n"},
			{"past year 9999", []string{"--now", "9999-12-31T23:59:59Z", "--far-now", flag, time.Now().Add(-2 * time.Second).Format(time.RFC3339Nano)},
				"moves the time past the year 9999 that RFC 3339 can write\n"},
		} {
			t.Run(flag+" "+tt.name, func(t *testing.T) {
				stdout, stderr, code := runMain(t, append([]string{"clock"}, tt.args...)...)
				if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, tt.wantErr) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line ending %q", code, stdout, stderr, tt.wantErr)
				}
			})
		}
	}
	wall := time.Now().Format(time.RFC3339Nano)
	stdout, stderr, code := runMain(t, "clock", "--now", at, "--started", wall, "--since", wall)
	if want := "infohash: clock: --started and --since are one flag: give it once\n"; code != 2 || stdout != "" || stderr != want {
		t.Errorf("clock --started --since: exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}
	help := helpOf(t, "clock")
	if !strings.Contains(help, "--started WALL") {
		t.Errorf("clock --help does not show --started:\n%s", help)
	}
	if regexp.MustCompile(`(?m)^ +--since`).MatchString(help) {
		t.Errorf("clock --help lists --since, the hidden old name of --started:\n%s", help)
	}
}
