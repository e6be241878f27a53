package fsutiltest

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Unblocked runs f and returns its error, failing the test if f has not
// returned within a minute: an open or read blocked on a FIFO at fifo
// (a path the test planted one at, or "" for none), which is then opened
// and closed to let f go before the test fails. Tests that check a
// reader refuses a FIFO use it, so that a regression fails in a minute
// rather than hanging the package until go test's own timeout.
func Unblocked(t testing.TB, fifo string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		if fifo != "" {
			// O_RDWR opens a FIFO at once on Linux, reader or not.
			if w, err := os.OpenFile(fifo, os.O_RDWR|unix.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			<-done
		}
		t.Fatalf("still blocked after a minute (on %s?)", fifo)
		return nil
	}
}
