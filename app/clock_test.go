package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClock: infohash clock takes and refuses the --now values the
// stages do, with their one-line error and exit 2, reading no dataset,
// and prints the time in UTC; it is left out of infohash --help.
func TestClock(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dataset")
	for _, tt := range []struct {
		name, now, want string // want: stdout, or "" for a refused --now
	}{
		{"UTC", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z\n"},
		{"offset", "2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05Z\n"},
		{"fraction", "2026-01-02T03:04:05.25Z", "2026-01-02T03:04:05.25Z\n"},
		{"word", "yesterday", ""},
		{"no such day", "2026-02-30T00:00:00Z", ""},
		{"hour 24", "2026-01-02T24:00:00Z", ""},
		{"no zone", "2026-01-02T03:04:05", ""},
		{"date only", "2026-01-02", ""},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, "clock", "--now", tt.now)
			// status parses --now before it looks for the dataset.
			_, statusErr, statusCode := runMain(t, "status", "--data", missing, "--now", tt.now)
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
			if statusCode != 2 || statusErr != stderr {
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
	if help, _, _ := runMain(t, "--help"); strings.Contains(help, "clock") {
		t.Errorf("infohash --help lists the hidden clock command:\n%s", help)
	}
	if help := helpOf(t, "clock"); !strings.Contains(help, "EXIT STATUS:") {
		t.Errorf("clock --help has no EXIT STATUS:\n%s", help)
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
			want := fmt.Sprintf("infohash: --now: %q is not an RFC 3339 time: %s\n", tt.now, tt.reason)
			if _, stderr, code := runMain(t, "clock", "--now", tt.now); code != 2 || stderr != want {
				t.Errorf("clock: exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
			missing := filepath.Join(t.TempDir(), "no-such-dataset")
			if _, stderr, code := runMain(t, "status", "--data", missing, "--now", tt.now); code != 2 || stderr != want {
				t.Errorf("status: exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
		})
	}
}
