package dedup

import (
	"errors"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestPartialAfterCommits: an error after some commits is partial (exit
// 3) and says what was applied; only bad input is blamed on the input
// (a full disk is not fixed by removing it).
func TestPartialAfterCommits(t *testing.T) {
	applied := Stats{Commits: 2, Snapshot: 7}
	cases := []struct {
		name     string
		err      error
		st       Stats
		code     int
		blame    bool // the message asks to fix or remove the input
		unchange bool // the error is returned as it is
		says     string
	}{
		{"bad input", exitcode.BadInput(errors.New("b.parquet: not Parquet")), applied, exitcode.Partial, true, false, "applied in 2 commits, up to snapshot 7"},
		{"disk full", errors.New("write staging/x.parquet: no space left on device"), applied, exitcode.Partial, false, false, "applied in 2 commits, up to snapshot 7"},
		{"one commit", errors.New("write: no space left on device"), Stats{Commits: 1, Snapshot: 7}, exitcode.Partial, false, false,
			"applied in 1 commit, up to snapshot 7"},
		{"interrupted", exitcode.With(exitcode.Interrupted, errors.New("interrupted")), applied, exitcode.Interrupted, false, true, ""},
		{"nothing committed", errors.New("write: no space left on device"), Stats{}, exitcode.Error, false, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := partialAfterCommits(c.err, c.st)
			if exitcode.Of(got) != c.code {
				t.Fatalf("exit %d, want %d (%v)", exitcode.Of(got), c.code, got)
			}
			if c.unchange {
				if got != c.err {
					t.Fatalf("got %v, want the error unchanged", got)
				}
				return
			}
			msg := got.Error()
			if !strings.Contains(msg, c.says) {
				t.Errorf("%q does not say what was applied (%q)", msg, c.says)
			}
			if blames := strings.Contains(msg, "fix or remove"); blames != c.blame {
				t.Errorf("%q: blames the input %v, want %v", msg, blames, c.blame)
			}
		})
	}
}
