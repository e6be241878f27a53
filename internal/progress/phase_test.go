package progress_test

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/progress"
	"github.com/infohash/infohash/internal/progress/progresstest"
)

// TestDoneLogsFinalCount: a reporter whose work lasted an interval or
// more logs its final count when done (finished=true), with its total;
// one done sooner logs nothing more.
func TestDoneLogsFinalCount(t *testing.T) {
	logs := progresstest.Capture(t)
	for _, tc := range []struct {
		name  string
		every time.Duration
		want  []string // nil: no final line
	}{
		{"long work", 0, []string{`msg="merge: reading results" done=7 `, "total=7", "percent=100", "finished=true"}},
		{"short work", time.Hour, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			progress.Interval = tc.every
			r := progress.New(&bytes.Buffer{}, "merge: reading results", 7)
			r.Add(7)
			before := logs.Len()
			r.Done()
			r.Done() // once is enough
			final := logs.String()[before:]
			if tc.want == nil {
				if final != "" {
					t.Fatalf("short work logged at Done: %s", final)
				}
				return
			}
			if strings.Count(final, "\n") != 1 {
				t.Fatalf("want one final line, got:\n%s", final)
			}
			progresstest.Check(t, final, "", tc.want)
		})
	}
}

// TestPhase: a step with no units logs its label as it goes and a
// finished line as it ends (with Interval 0, at once); a step shorter
// than Interval logs nothing; a nil Phase ends quietly.
func TestPhase(t *testing.T) {
	logs := progresstest.Capture(t)
	for _, tc := range []struct {
		name  string
		every time.Duration
		lines []string // the lines logged, in order, without their time
	}{
		{"long step", 0, []string{`level=INFO msg="merge: sorting results" elapsed=0s`,
			`level=INFO msg="merge: sorting results" elapsed=0s finished=true`}},
		{"short step", time.Hour, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			progress.Interval = tc.every
			p := progress.StartPhase("merge: sorting results")
			p.End()
			p.End() // once is enough
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if l != "" {
					got = append(got, l[strings.Index(l, " ")+1:])
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
				t.Fatalf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
			}
		})
	}
	var none *progress.Phase
	none.End()
}

// lineLog collects the lines a text handler writes and signals the
// first one.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	first chan struct{}
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := strings.TrimSuffix(string(b), "\n")
	l.lines = append(l.lines, line[strings.Index(line, " ")+1:])
	if len(l.lines) == 1 {
		close(l.first)
	}
	return len(b), nil
}

// TestPhaseTicks: a step that outlasts Interval logs its label (with no
// count) as its ticker fires, then, at End, one finished line, its last.
func TestPhaseTicks(t *testing.T) {
	l := &lineLog{first: make(chan struct{})}
	old, oldEvery := slog.Default(), progress.Interval
	slog.SetDefault(slog.New(slog.NewTextHandler(l, nil)))
	t.Cleanup(func() { slog.SetDefault(old); progress.Interval = oldEvery })
	progress.Interval = time.Millisecond
	p := progress.StartPhase("merge: sorting results")
	<-l.first
	p.End()
	p.End() // once is enough
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < 2 {
		t.Fatalf("logged %q, want a tick's line and a finished one", l.lines)
	}
	tick := regexp.MustCompile(`^level=INFO msg="merge: sorting results" elapsed=\d+s$`)
	last := regexp.MustCompile(`^level=INFO msg="merge: sorting results" elapsed=\d+s finished=true$`)
	for i, line := range l.lines {
		want := tick
		if i == len(l.lines)-1 {
			want = last
		}
		if !want.MatchString(line) {
			t.Fatalf("line %d of %d: %s, want %s", i+1, len(l.lines), line, want)
		}
	}
}
