package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLogsWhenNotATerminal(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)
	Interval = time.Millisecond
	r := New(&bytes.Buffer{}, "dedup: reading", 100)
	r.Add(10)
	time.Sleep(2 * time.Millisecond)
	r.Add(40)
	r.Done()
	if r.Count() != 50 {
		t.Fatalf("count %d", r.Count())
	}
	if !strings.Contains(logs.String(), "dedup: reading") || !strings.Contains(logs.String(), "percent=50") {
		t.Fatalf("logs: %s", logs.String())
	}
	var nilR *Reporter
	nilR.Add(1)
	nilR.Done()
}
