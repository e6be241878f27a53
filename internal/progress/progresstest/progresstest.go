// Package progresstest holds the set-up and checks of tests that a
// command reports its progress through internal/progress.
package progresstest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/progress"
)

// Capture routes the default slog logger into the returned buffer and
// makes every reporter log at each step (progress.Interval 0), both until
// t ends. The buffer is written under slog's handler lock.
func Capture(t testing.TB) *bytes.Buffer {
	t.Helper()
	var logs bytes.Buffer
	old, oldEvery := slog.Default(), progress.Interval
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	progress.Interval = 0
	t.Cleanup(func() { slog.SetDefault(old); progress.Interval = oldEvery })
	return &logs
}

// Check fails t unless logs hold every string of want; with want nil,
// unless they hold no line of label's (a reporter that should be off).
func Check(t testing.TB, logs, label string, want []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(logs, w) {
			t.Errorf("no %q in the logs:\n%s", w, logs)
		}
	}
	if want == nil && strings.Contains(logs, label) {
		t.Errorf("progress without ProgressTo:\n%s", logs)
	}
}
