package dhtboot

import (
	"testing"

	alog "github.com/anacrolix/log"
)

// counting is an anacrolix/log handler that counts the records it gets.
type counting struct{ n *int }

func (c counting) Handle(alog.Record) { *c.n++ }

// TestQuietLibraryLogs: after QuietLibraryLogs, what anacrolix/dht logs
// through the package-level logger (log.Printf, as for a bad KRPC message)
// reaches no handler; before, it did.
func TestQuietLibraryLogs(t *testing.T) {
	var n int
	saved := alog.Default
	t.Cleanup(func() { alog.Default = saved })
	alog.Default.Handlers = []alog.Handler{counting{&n}}
	alog.Printf("received bad krpc message from %s", "127.0.0.1:1")
	if n != 1 {
		t.Fatalf("before: %d records handled, want 1", n)
	}
	QuietLibraryLogs()
	alog.Printf("received bad krpc message from %s", "127.0.0.1:1")
	if n != 1 {
		t.Fatalf("after QuietLibraryLogs: %d records handled, want still 1", n)
	}
}
