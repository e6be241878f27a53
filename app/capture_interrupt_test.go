package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureInterruptedNamesTheOutput: the line of a capture stopped by
// SIGINT names where its observations went; with -o - it said
// "committed to -".
func TestCaptureInterruptedNamesTheOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "obs.parquet")
	for _, tt := range []struct {
		name, out, want string
	}{
		{"file", file, "observations committed to " + file + "\n"},
		{"stdout", "-", "observations written to stdout\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // as SIGINT leaves it
			args := []string{"infohash", "capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1m",
				"--dht-state", filepath.Join(dir, "dht-"+tt.name), "-o", tt.out}
			var stdout, stderr bytes.Buffer
			code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
			last := stderr.String()[strings.LastIndex(strings.TrimSuffix(stderr.String(), "\n"), "\n")+1:]
			if code != 130 || !strings.HasPrefix(last, "infohash: capture: interrupted; ") || !strings.HasSuffix(last, tt.want) {
				t.Fatalf("exit %d, last line %q: want 130 and a line ending %q", code, last, tt.want)
			}
		})
	}
}
