package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// unwrapper wraps a writer as app's stallWatch wraps stdout.
type unwrapper struct{ w io.Writer }

func (u unwrapper) Write(p []byte) (int, error) { return u.w.Write(p) }
func (u unwrapper) Unwrap() io.Writer           { return u.w }

// TestHoldStream: a stream written into a regular file (stdout redirected
// to it), directly or through a wrapper, is locked while written: Writing
// says so and names the writer, a second writer is refused, and Close
// (the writer's end) lets readers at it, though the shell's descriptor of
// the file stays open. Anything but a regular file is not locked.
func TestHoldStream(t *testing.T) {
	defer func(d time.Duration) { holdRetry = d }(holdRetry)
	holdRetry = 50 * time.Millisecond
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name   string
		writer func(t *testing.T, path string) io.Writer
		locks  bool
	}{
		{"regular file", func(t *testing.T, path string) io.Writer { return create(t, path) }, true},
		{"wrapped regular file", func(t *testing.T, path string) io.Writer { return unwrapper{create(t, path)} }, true},
		{"buffer", func(*testing.T, string) io.Writer { return &bytes.Buffer{} }, false},
		{"device", func(t *testing.T, _ string) io.Writer {
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "obs.arrows")
			w := tc.writer(t, path)
			s, err := HoldStream(w, 5*time.Millisecond)
			if err != nil || (s != nil) != tc.locks {
				t.Fatalf("HoldStream = %v, %v; want a lock: %v", s, err, tc.locks)
			}
			if !tc.locks {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if _, err := io.WriteString(w, "batch"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // a few periodic fsyncs
			who, busy := Writing(path)
			if want := fmt.Sprintf("(pid %d)", os.Getpid()); !busy || !strings.HasSuffix(who, want) {
				t.Fatalf("Writing = %q, %v; want busy, by %s", who, busy, want)
			}
			if _, err := HoldStream(create(t, path), 0); !errors.Is(err, ErrStreamHeld) || !strings.Contains(err.Error(), path) {
				t.Fatalf("a second writer: %v, want ErrStreamHeld naming %s", err, path)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if who, busy := Writing(path); busy {
				t.Fatalf("Writing after Close = %q, busy", who)
			}
			if b, _ := os.ReadFile(path); string(b) != "batch" {
				t.Fatalf("file holds %q", b)
			}
		})
	}
	if _, busy := Writing(missing); busy {
		t.Fatal("a missing file is being written")
	}
}

// TestWritingFIFO: Writing does not open a FIFO (dedup named a folder
// holding one blocked in it until someone wrote to the FIFO): it is no
// stream being written into a file, and Writing returns at once.
func TestWritingFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "b.arrows")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan bool, 1)
	go func() {
		_, busy := Writing(fifo)
		done <- busy
	}()
	// A bound on a hang, not a timing: Writing takes microseconds.
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case busy := <-done:
		if busy {
			t.Fatal("a FIFO is being written, says Writing")
		}
	case <-timer.C:
		// Let the blocked open return, so that the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("Writing blocked opening a FIFO")
	}
}

// create opens path for writing, appending, as a shell's >> does, so
// that a second writer in a test does not truncate the first's bytes.
func create(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
