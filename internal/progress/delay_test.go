package progress

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestBarDelay: on a terminal, work shorter than Delay draws nothing,
// not even at Done (a 0.06 s export drew a bar and cleared it); work that
// runs on draws its bar at the first Add after Delay, at its count so
// far. Nothing is logged meanwhile, even with Interval 0: the terminal
// gets the bar or nothing. The clock and the terminal are the test's:
// nothing sleeps.
func TestBarDelay(t *testing.T) {
	var logs bytes.Buffer
	oldNow, oldTerm, oldDelay, oldEvery, oldLog := now, isTerminal, Delay, Interval, slog.Default()
	t.Cleanup(func() {
		now, isTerminal, Delay, Interval = oldNow, oldTerm, oldDelay, oldEvery
		slog.SetDefault(oldLog)
	})
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	isTerminal = func(io.Writer) bool { return true }
	Delay, Interval = time.Second, 0
	for _, tc := range []struct {
		name  string
		adds  []time.Duration // when each Add(1) comes, after the start
		drawn int             // the Add after which the bar shows (-1: never)
	}{
		{"short work", []time.Duration{0, 60 * time.Millisecond}, -1},
		{"just short", []time.Duration{500 * time.Millisecond, time.Second - time.Nanosecond}, -1},
		{"long work", []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, 1},
		{"one unit after the delay", []time.Duration{3 * time.Second}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := t0
			now = func() time.Time { return clock }
			var term bytes.Buffer
			r := New(&term, "export: partitions", 10)
			for i, at := range tc.adds {
				clock = t0.Add(at)
				r.Add(1)
				drawn := term.Len() > 0
				if want := tc.drawn >= 0 && i >= tc.drawn; drawn != want {
					t.Fatalf("after Add %d at %v: drawn %v, want %v (%q)", i, at, drawn, want, term.String())
				}
			}
			// The bar starts at the count so far, not at 1.
			if want := fmt.Sprintf("(%d/10", tc.drawn+1); tc.drawn >= 0 &&
				(!strings.Contains(term.String(), "export: partitions") || !strings.Contains(term.String(), want)) {
				t.Fatalf("the bar lacks its label or %q: %q", want, term.String())
			}
			before := term.Len()
			r.Done()
			if tc.drawn < 0 && term.Len() != 0 {
				t.Fatalf("short work drew at Done: %q", term.String())
			}
			if tc.drawn >= 0 && term.Len() == before {
				t.Fatal("Done did not clear the bar")
			}
			if r.Count() != int64(len(tc.adds)) {
				t.Fatalf("count %d, want %d", r.Count(), len(tc.adds))
			}
			if logs.Len() != 0 {
				t.Fatalf("logged on a terminal: %s", logs.String())
			}
		})
	}
}
