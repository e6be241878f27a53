package dedup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestPipeNamedAsInputIsRefused: an input named by path that is a pipe
// ("dedup <(zcat list.gz)" names /dev/fd/63) can be read only once, but
// dedup opens an input several times (to tell its kind, to read it, to
// checksum it): the first bytes went to the probe and the run applied
// what was left, or nothing, and exited 0 with the input in the ledger.
// It is refused up front; stdin (-) is the way to pipe an input.
func TestPipeNamedAsInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var list strings.Builder
	for i := range 50 {
		fmt.Fprintf(&list, "%040x\n", i+1)
	}
	go func() { // 2 KB: the pipe's buffer takes it whole
		w.WriteString(list.String())
		w.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := DefaultOptions()
	o.Data, o.Inputs, o.Now = data, []string{fmt.Sprintf("/proc/self/fd/%d", r.Fd())}, t0
	_, err = Run(ctx, o)
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v, want bad input: not a regular file", err)
	}
	if _, err := os.Stat(filepath.Join(data, "CURRENT")); err == nil {
		if got := readState(t, data); len(got) != 0 {
			t.Fatalf("committed %d hashes", len(got))
		}
	}
}
