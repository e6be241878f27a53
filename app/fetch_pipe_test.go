package app

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchBrokenPipeIsQuiet: "fetch ... -o - | head" whose reader went
// away ends with 141 and, as every other command, prints nothing: no
// summary of counters (text or the JSON "fetch: done" record), no
// --stats-json. With JSON logs the last record says how the run ended.
func TestFetchBrokenPipeIsQuiet(t *testing.T) {
	dir := t.TempDir()
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String() // closed below: connections are refused
	l.Close()
	for _, tt := range []struct {
		name  string
		extra []string
		check func(stderr string) bool
	}{
		{"text", nil, func(s string) bool { return s == "" }},
		{"json", []string{"--log-format", "json"}, func(s string) bool {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			return len(lines) == 1 && strings.Contains(lines[0], `"exit":141`) && strings.Contains(lines[0], "broken pipe")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stats := filepath.Join(t.TempDir(), "stats.json")
			args := append([]string{"infohash", "fetch", hashes, "-o", "-", "--no-dht", "--peer", refused,
				"--stats-json", stats}, tt.extra...)
			var stderr bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(""), readerGone(t), &stderr)
			if code != 141 || !tt.check(stderr.String()) {
				t.Fatalf("exit %d, stderr %q; want 141 and nothing but how the run ended", code, stderr.String())
			}
			if _, err := os.Stat(stats); !os.IsNotExist(err) {
				t.Fatalf("--stats-json written after a broken pipe: %v", err)
			}
		})
	}
}
