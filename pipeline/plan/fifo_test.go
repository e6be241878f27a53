package plan

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestFIFOOutputDoesNotHideBadInput: with -o naming a FIFO nobody reads,
// a --data that is no dataset is still bad input (exit 2) at once: the
// FIFO, whose open waits for a reader, is opened only after the dataset
// is read.
func TestFIFOOutputDoesNotHideBadInput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "jobs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	o := DefaultOptions()
	o.Data, o.Output = filepath.Join(dir, "not-a-dataset"), fifo
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), o)
		done <- err
	}()
	select {
	case err := <-done:
		if exitcode.Of(err) != exitcode.Usage {
			t.Fatalf("err %v (exit %d), want bad input (exit 2)", err, exitcode.Of(err))
		}
	case <-time.After(time.Minute): // a bound on a hang, not a speed
		t.Fatal("plan-retries waited for a reader of its FIFO before reading --data")
	}
}
