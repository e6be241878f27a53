package fsutil

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// wrapped is a writer that wraps another, as app's stall watch does.
type wrapped struct{ w io.Writer }

func (w wrapped) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w wrapped) Unwrap() io.Writer           { return w.w }

// TestReaderGone: only a pipe or FIFO whose every reader has closed it is
// gone, seen through writers that wrap it; a pipe still read, a regular
// file and a writer without a descriptor never are.
func TestReaderGone(t *testing.T) {
	pipe := func(t *testing.T, closeReader bool) io.Writer {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		if closeReader {
			r.Close()
		}
		return w
	}
	fifo := func(t *testing.T, closeReader bool) io.Writer {
		t.Helper()
		p := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := CreateOutput(p) // written in place, as -o FIFO is
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); f.Abort() })
		if closeReader {
			r.Close()
		}
		return f
	}
	for _, tt := range []struct {
		name string
		w    func(t *testing.T) io.Writer
		want bool
	}{
		{"pipe, reader gone", func(t *testing.T) io.Writer { return pipe(t, true) }, true},
		{"pipe, reader there", func(t *testing.T) io.Writer { return pipe(t, false) }, false},
		{"wrapped pipe, reader gone", func(t *testing.T) io.Writer { return wrapped{wrapped{pipe(t, true)}} }, true},
		{"wrapped pipe, reader there", func(t *testing.T) io.Writer { return wrapped{pipe(t, false)} }, false},
		{"FIFO, reader gone", func(t *testing.T) io.Writer { return fifo(t, true) }, true},
		{"FIFO, reader there", func(t *testing.T) io.Writer { return fifo(t, false) }, false},
		{"regular file", func(t *testing.T) io.Writer {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}, false},
		{"no descriptor", func(*testing.T) io.Writer { return &bytes.Buffer{} }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReaderGone(tt.w(t)); got != tt.want {
				t.Fatalf("ReaderGone = %v, want %v", got, tt.want)
			}
		})
	}
}
