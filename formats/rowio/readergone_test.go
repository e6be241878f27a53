package rowio

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestWriterReaderGone: a writer's output is gone once it is a pipe or
// FIFO that no reader holds open: an Arrow stream on a pipe, a Parquet
// file written in place to a FIFO; never a Parquet file under a
// temporary name.
func TestWriterReaderGone(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		open func(t *testing.T, gone bool) *Writer[schema.Job]
	}{
		{"Arrow on a pipe", func(t *testing.T, gone bool) *Writer[schema.Job] {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			if gone {
				r.Close()
			}
			return NewArrowWriter[schema.Job]("stdout", w)
		}},
		{"Parquet to a FIFO", func(t *testing.T, gone bool) *Writer[schema.Job] {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
			r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			w, err := Create[schema.Job](fifo, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Abort)
			if gone {
				r.Close()
			}
			return w
		}},
	} {
		for _, gone := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, reader gone %v", tt.name, gone), func(t *testing.T) {
				if got := tt.open(t, gone).ReaderGone(); got != gone {
					t.Errorf("ReaderGone = %v", got)
				}
			})
		}
	}
	w, err := Create[schema.Job](filepath.Join(dir, "jobs.parquet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if w.ReaderGone() {
		t.Error("a Parquet file under a temporary name: ReaderGone")
	}
}
