package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
)

// blobJob is a job as DuckDB writes one: info_hash a BLOB (BYTE_ARRAY).
type blobJob struct {
	InfoHash []byte `parquet:"info_hash,optional"`
}

// TestFetchBadInputOneLine: fetch's bad input, found after some good
// jobs were read, ends with the one error line and no counters (nothing
// is written, as for every command's bad input).
func TestFetchBadInputOneLine(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "l.txt")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("%040x\nnot-a-hash\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	duck := filepath.Join(dir, "duck.parquet")
	w, err := rowio.Create[blobJob](duck, nil)
	if err != nil {
		t.Fatal(err)
	}
	good := make([]byte, 20)
	if err := w.Write([]blobJob{{good}, {[]byte{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, want string }{
		{"hash list", list, `l.txt:2: infohash "not-a-hash"`},
		{"duckdb blob of 2 bytes", duck, "info_hash has 2 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "r.parquet")
			_, stderr, code := runMain(t, "fetch", "--no-dht", tt.in, "-o", out)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and one line with %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s written after bad input", out)
			}
		})
	}
}

// TestMetadataMemoryRaisedSaysSo: a --metadata-memory below
// --max-metadata-size is raised to it (one peer's largest metadata must
// fit), and fetch says so rather than raise it silently.
func TestMetadataMemoryRaisedSaysSo(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "l.txt")
	if err := os.WriteFile(list, []byte("not-a-hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		warn bool
	}{
		{"below", []string{"--metadata-memory", "1"}, true},
		{"default", nil, false},
		{"equal", []string{"--metadata-memory", "1000", "--max-metadata-size", "1000"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"fetch", "--no-dht"}, tt.args...), list, "-o", filepath.Join(dir, "r.parquet"))
			_, stderr, _ := runMain(t, args...)
			if got := strings.Contains(stderr, "--metadata-memory is below --max-metadata-size"); got != tt.warn {
				t.Fatalf("warned %v, want %v; stderr:\n%s", got, tt.warn, stderr)
			}
		})
	}
}

// silentUDP is a loopback UDP address that takes packets and answers
// none: a DHT bootstrap through it cannot finish before its own timeout.
func silentUDP(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String()
}

// TestFetchBadInputBeforeDHT: input that is bad from its start is
// refused before fetch starts its DHT node: exit 2, the one error line,
// no bootstrap (through a router that never answers) before it.
func TestFetchBadInputBeforeDHT(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(list, []byte("not-a-hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.bin")
	if err := os.WriteFile(junk, []byte("\x00\x01junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	duck := filepath.Join(dir, "duck.parquet")
	w, err := rowio.Create[blobJob](duck, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]blobJob{{[]byte{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	boot := silentUDP(t)
	for _, tt := range []struct{ name, in, want string }{
		{"hash list", list, `bad.txt:1: infohash "not-a-hash"`},
		{"not jobs", junk, "neither Parquet jobs"},
		{"parquet row 1", duck, "row 1: info_hash has 2 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "r.parquet")
			_, stderr, code := runMain(t, "fetch", "--bootstrap", boot, "--dht-listen", "127.0.0.1:0", tt.in, "-o", out)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "bootstrapped") {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and only one line with %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s written after bad input", out)
			}
		})
	}
}
