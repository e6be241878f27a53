package app

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/hashlist"
	"github.com/infohash/infohash/internal/progress"
)

// TestHashListLineLimit: dedup and fetch read a hash list with the same
// line limit, hashlist.MaxLine, and a line over it ends either with exit
// status 2 and one line naming the file, the line and the limit, and
// nothing written. (dedup allowed 64 MiB and fetch 16 MiB.)
func TestHashListLineLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a hash list of 64 MiB")
	}
	// stderr must be the one line: on a loaded machine reading the 64 MiB
	// line took over progress.Interval (10s), and a progress line came
	// first (CI run of 2026-12-05, dedup 14 s, fetch 19 s).
	every := progress.Interval
	progress.Interval = time.Hour
	t.Cleanup(func() { progress.Interval = every })
	dir := t.TempDir()
	list := filepath.Join(dir, "l.txt")
	f, err := os.Create(list)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%040x\n", 1)
	chunk := strings.Repeat("a", 1<<16)
	for n := 0; n <= hashlist.MaxLine; n += len(chunk) { // MaxLine bytes and more
		w.WriteString(chunk)
	}
	w.WriteString("\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s:2: line longer than %d bytes\n", list, hashlist.MaxLine)
	data, out := filepath.Join(dir, "ds"), filepath.Join(dir, "r.parquet")
	tests := []struct {
		name    string
		args    []string
		written string // what must not exist after
	}{
		{"dedup", []string{"dedup", "--data", data, "--far-now", "--now", "2026-03-01T00:00:00Z", list}, filepath.Join(data, "CURRENT")},
		// A --peer, so that no warning of a run without a peer source
		// comes before the line past the first batch is read.
		{"fetch", []string{"fetch", "--no-dht", "--peer", refusingAddr(t), list, "-o", out}, out},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || stderr != "infohash: "+tt.name+": "+want {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and %q", code, stderr, "infohash: "+tt.name+": "+want)
			}
			if _, err := os.Stat(tt.written); err == nil {
				t.Fatalf("%s written after a line over the limit", tt.written)
			}
		})
	}
}
