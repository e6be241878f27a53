package export

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestFullOutputNamedOnce: a write that fails (a full disk: /dev/full)
// fails export in every format with one error naming the output once, as
// "export: OUTPUT: …: no space left on device", not twice (the Arrow
// writer's label repeated the path export puts first).
func TestFullOutputNamedOnce(t *testing.T) {
	if f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err != nil {
		t.Skipf("no /dev/full: %v", err)
	} else {
		f.Close()
	}
	data, _ := fixture(t)
	for _, format := range []string{"parquet", "csv", "jsonl", "arrow", "magnet", "es-bulk"} {
		t.Run(format, func(t *testing.T) {
			o := DefaultOptions()
			o.Data, o.Table, o.Format, o.Output = data, "state", format, "/dev/full"
			_, err := Run(context.Background(), o)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("error %v; want ENOSPC", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "export: /dev/full: ") || strings.Contains(msg, "/dev/full: /dev/full") {
				t.Errorf("error %q; want the output named once, after \"export: \"", msg)
			}
		})
	}
}

// fullWriter is a stdout whose writes fail as a full disk's do.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutNamedInErrors: a write to stdout (-o -) that fails names it
// "stdout", as a file output is named by its path, in the partitioned
// tables and the whole ones: it was "export: -: …".
func TestStdoutNamedInErrors(t *testing.T) {
	data, _ := fixture(t)
	for _, table := range []string{"state", "ledger"} {
		for _, format := range []string{"parquet", "csv", "jsonl", "arrow"} {
			t.Run(table+"/"+format, func(t *testing.T) {
				o := DefaultOptions()
				o.Data, o.Table, o.Format, o.Stdout = data, table, format, fullWriter{}
				_, err := Run(context.Background(), o)
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("error %v; want ENOSPC", err)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "export: stdout: ") {
					t.Errorf("error %q; want it to begin \"export: stdout: \"", msg)
				}
			})
		}
	}
}
