package dataset

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWaiterNamesHolderAfterEmptyLock: a waiter that finds the LOCK file
// empty (a writer lets go after emptying it, and the next writes its
// line just after it takes the lock) says nothing yet, and names the
// holder once the line is there: it logged held_by="another process" for
// a holder about to name itself. A LOCK file that stays empty (flock(1)
// holds it) is "another process" after unnamedPolls polls.
func TestWaiterNamesHolderAfterEmptyLock(t *testing.T) {
	const line = "host=h pid=7 since=2026-12-07T00:00:00Z"
	tests := []struct {
		name  string
		empty int    // polls that find LOCK empty
		write bool   // then the holder writes its line
		want  string // held_by of the one line ("": no line)
	}{
		{"named at once", 0, true, line},
		{"empty, then named", 1, true, line},
		{"empty a moment", 1, false, ""},
		{"empty for long", unnamedPolls, false, ""},
		{"empty for good", unnamedPolls + 1, false, unnamedHolder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := captureLogs(t)
			path := filepath.Join(t.TempDir(), "LOCK")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			w := &lockWaiter{dir: "D"}
			for range tt.empty {
				w.waiting(path)
			}
			if tt.write {
				if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				w.waiting(path)
			}
			lines := logs.take()
			if tt.want == "" {
				if len(lines) != 0 {
					t.Fatalf("logged %q, want nothing yet", lines)
				}
				return
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "dataset: waiting for the writer lock ") ||
				!strings.Contains(lines[0], " held_by="+tt.want+" ") {
				t.Fatalf("logged %q, want one line, held_by=%s", lines, tt.want)
			}
		})
	}
}

// captureLogs sends the default logger's records to the returned
// records until the test ends.
func captureLogs(t *testing.T) *records {
	t.Helper()
	logs := &records{}
	was := slog.Default()
	slog.SetDefault(slog.New(logs))
	t.Cleanup(func() { slog.SetDefault(was) })
	return logs
}
