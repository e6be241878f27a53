package app

import (
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// FuzzClock feeds the time flags (--now, which every stage parses as
// clock does, and --add) through the clock command: it either prints
// one RFC 3339 time in UTC that reads back as --now moved by --add, or
// refuses with one line and exit 2. A stage commits the times it reckons
// from --now as RFC 3339 and as milliseconds; a --now it takes must
// therefore be one that RFC 3339 can write.
func FuzzClock(f *testing.F) {
	for _, s := range [][2]string{
		{"2026-01-02T03:04:05Z", ""}, {"2026-01-02T05:04:05+02:00", "1h"}, {"2026-01-02T03:04:05.25Z", "1.5s"},
		{"9999-12-31T23:00:00Z", "2h"}, {"0000-01-01T01:00:00Z", "-2h"}, {"2026-02-30T00:00:00Z", ""},
		{"2026-01-02T03:04:05", "1d"}, {"yesterday", "3 hours"}, {"2026-01-02T03:04:05Z!", "-1w"},
		{"9999-12-31T23:30:00-01:00", ""}, {"0000-01-01T00:30:00+01:00", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, now, add string) {
		args := []string{"clock", "--far-now", "--now=" + now}
		if add != "" {
			args = append(args, "--add="+add)
		}
		stdout, stderr, code := runMain(t, args...)
		switch code {
		case 0:
			got, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(stdout, "\n"))
			if err != nil || stderr != "" || strings.Count(stdout, "\n") != 1 || got.Location() != time.UTC {
				t.Fatalf("%q: printed %q (%v), stderr %q: not one RFC 3339 time in UTC", args, stdout, err, stderr)
			}
			at, err := time.Parse(time.RFC3339Nano, now)
			if err != nil {
				t.Fatalf("%q: took a --now that time.Parse refuses: %v", args, err)
			}
			if d, err := parseFlagDuration(add); add != "" && err == nil {
				at = at.Add(d)
			}
			if !got.Equal(at) {
				t.Fatalf("%q: printed %s, want %s", args, got, at)
			}
		case 2:
			if stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "infohash: clock: ") || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("%q: exit 2, stdout %q, stderr %q: want one line", args, stdout, stderr)
			}
		default:
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	})
}

// FuzzParseSince: export's --since is an RFC 3339 time, taken as it
// reads, or a positive duration (as the duration flags take it) before
// the wall clock; anything else is one line naming the flag, exit 2.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"7d", "24h", "1w", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+01:00", "1x", "0", "-1h", "",
		"9999999999w", "2026-02-30T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		before := time.Now()
		got, err := parseSince("--since", s)
		after := time.Now()
		if err != nil {
			if exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--since") {
				t.Fatalf("%q: exit %d, %q: want 2 and one line naming --since", s, exitcode.Of(err), err)
			}
			return
		}
		if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
			if !got.Equal(at) {
				t.Fatalf("%q: %v, want %v", s, got, at)
			}
			return
		}
		d, err := parseFlagDuration(s)
		if err != nil || d <= 0 || got.Before(before.Add(-d)) || got.After(after.Add(-d)) {
			t.Fatalf("%q: took %v, which is not the time it gives (%v, %v) before the wall clock", s, got, d, err)
		}
	})
}
