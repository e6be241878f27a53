package dedup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPipeNamedAsInput: an input named by path that can be read only
// once (a pipe, as "dedup <(zcat list.gz)" names /dev/fd/63, or a FIFO) is
// spooled into the inbox like stdin and applied from there; dedup opens an
// input several times, and reading a pipe each time applied part of it, or
// nothing, while recording it as applied. The same content piped again is
// already applied, and no spool is left in the inbox.
func TestPipeNamedAsInput(t *testing.T) {
	var list strings.Builder
	for i := range 5000 { // 205 KB: more than a pipe's buffer
		fmt.Fprintf(&list, "%040x\n", i+1)
	}
	pipe := func(t *testing.T, dir string) string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() {
			w.WriteString(list.String())
			w.Close()
		}()
		return fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	}
	fifo := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, fmt.Sprintf("fifo-%d", time.Now().UnixNano()))
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.WriteString(list.String())
			f.Close()
		}()
		return p
	}
	for name, make := range map[string]func(*testing.T, string) string{"pipe": pipe, "fifo": fifo} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			for run, wantNew := range []int64{5000, 0} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				o := DefaultOptions()
				o.Data, o.Inputs, o.Now = data, []string{make(t, dir)}, t0
				st, err := Run(ctx, o)
				cancel()
				if err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if st.New != wantNew {
					t.Fatalf("run %d: %d new hashes, want %d", run, st.New, wantNew)
				}
			}
			if got := readState(t, data); len(got) != 5000 {
				t.Fatalf("state holds %d hashes, want 5000", len(got))
			}
			ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
			for _, e := range ents {
				t.Errorf("left in the inbox: %s", e.Name())
			}
		})
	}
}
