package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStdinTerminalRefused: dedup, fetch and merge given "-" with stdin a
// terminal (a real pseudo-terminal, opened as posix_openpt does: no
// test hook) refuse at once, exit 2, saying what
// to pipe in, and make nothing; they waited in silence for input nobody
// types, and on Ctrl-C said stdin was empty.
func TestStdinTerminalRefused(t *testing.T) {
	dir, data := seedDataset(t)
	in := filepath.Join(dir, "h.txt")
	fresh := filepath.Join(dir, "fresh")
	out := filepath.Join(dir, "results.parquet")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dedup", []string{"dedup", "--data", data, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, a file too", []string{"dedup", "--data", data, in, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"dedup, a new dataset", []string{"dedup", "--data", fresh, "-"},
			"dedup: stdin is a terminal: pipe observations in (capture -o - | dedup --data D -) or name a file"},
		{"fetch", []string{"fetch", "--no-dht", "-o", out, "-"},
			"fetch: stdin is a terminal: pipe jobs in (plan-retries --data D -o - | fetch - -o FILE) or name a file"},
		{"merge", []string{"merge", "--data", data, "-"},
			"merge: stdin is a terminal: pipe results in (fetch JOBS -o - | merge --data D -) or name a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty := openPTY(t) // output_test.go's
			type result struct {
				stderr string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				var stdout, stderr bytes.Buffer
				code := Main(append([]string{"infohash"}, tc.args...), tty, &stdout, &stderr)
				done <- result{stderr.String(), code}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				ptmx.Close() // the terminal hangs up: its reads fail
				r = <-done
				t.Fatalf("waited on the terminal for 20 s; then exit %d, stderr %q", r.code, r.stderr)
			}
			if want := "infohash: " + tc.want + "\n"; r.code != 2 || r.stderr != want {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
			}
			for _, p := range []string{fresh, out} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s was made (%v)", p, err)
				}
			}
			if got, _ := filepath.Glob(filepath.Join(data, "inbox", "*")); len(got) > 0 {
				t.Fatalf("the inbox holds %q", got)
			}
		})
	}
}
