package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// saturated is how a gap too long for a time.Duration (about 292 years)
// printed before showGap: the largest Duration, whatever the gap.
const saturated = "106751d"

// TestShowGap: a gap that fits a time.Duration prints as the duration
// flags write one, rounded to the hour; a longer one in whole years,
// either way round, not as the largest Duration.
func TestShowGap(t *testing.T) {
	wall := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		to   time.Time
		want string
	}{
		{"3 days ahead", wall.Add(72*time.Hour + 20*time.Minute), "3d"},
		{"200 years ahead", wall.AddDate(200, 0, 0), "73048d"},
		{"year 2400", time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC), "more than 373 years"},
		{"year 2400, a day short of 374 years", wall.AddDate(374, 0, -1), "more than 373 years"},
		{"year 1500", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), "more than 526 years"},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), "more than 7973 years"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, got := range []string{showGap(wall, tt.to), showGap(tt.to, wall)} {
				if got != tt.want {
					t.Errorf("showGap(%s, %s) = %q, want %q", wall, tt.to, got, tt.want)
				}
			}
		})
	}
}

// TestFarNowGap: with --far-now, a --now in the year 2400 or 1500 is more
// than a time.Duration (about 292 years) from the wall clock. dedup's
// warning that its --now is ahead gave that gap as the largest Duration
// (106751d23h47m16s...); it says the years. In 1500 it does not warn
// (behind), and clock prints the time as given, with --started as far
// back moving it on by the whole span (it moved it by 292 years).
func TestFarNowGap(t *testing.T) {
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte(hexLines("fargap", 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	years := regexp.MustCompile(`is more than (\d+) years ahead of the wall clock`)
	for _, now := range []string{"2400-01-01T00:00:00Z", "1500-01-01T00:00:00Z"} {
		at, _ := time.Parse(time.RFC3339, now)
		t.Run("dedup "+now, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			wall := time.Now()
			_, stderr, code := runMain(t, "dedup", "--data", data, "--now", now, "--far-now", hashes)
			if code != 0 || strings.Contains(stderr, saturated) {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			m := years.FindStringSubmatch(stderr)
			if at.Before(wall) {
				if strings.Contains(stderr, "ahead of the wall clock") {
					t.Fatalf("warned that a --now in the past is ahead:\n%s", stderr)
				}
				return
			}
			if m == nil || strings.Count(stderr, "ahead of the wall clock") != 1 {
				t.Fatalf("want one warning giving the years --now is ahead:\n%s", stderr)
			}
			if n, _ := strconv.Atoi(m[1]); wall.AddDate(n, 0, 0).After(at) || !wall.AddDate(n+1, 0, 0).After(at) {
				t.Errorf("warned of more than %d years, but %s is %s from the wall clock %s", n, now, showGap(wall, at), wall.UTC())
			}
		})
		t.Run("clock "+now, func(t *testing.T) {
			if stdout, stderr, code := runMain(t, "clock", "--now", now, "--far-now"); code != 0 || stdout != now+"\n" || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %s", code, stdout, stderr, now)
			}
		})
		t.Run("clock --started 1700 "+now, func(t *testing.T) {
			started := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
			stdout, stderr, code := runMain(t, "clock", "--now", now, "--far-now", "--started", started.Format(time.RFC3339))
			got, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(stdout))
			if code != 0 || err != nil || stderr != "" {
				t.Fatalf("exit %d, stdout %q (%v), stderr %q", code, stdout, err, stderr)
			}
			// got-now is the span from WALL to the wall clock, in seconds
			// (neither fits a Duration): a minute's slack for the run.
			moved, elapsed := got.Unix()-at.Unix(), time.Now().Unix()-started.Unix()
			if moved > elapsed || moved < elapsed-60 {
				t.Errorf("printed %s: moved --now on by %ds, want the %ds since %s", stdout, moved, elapsed, started)
			}
		})
	}
}
