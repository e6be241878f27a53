package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/sniff/snifftest"
)

// TestCompressedInputOneLine: dedup, fetch and merge each refuse a
// gzip-compressed input (here a hash list, whose gzip header holds no
// NUL: fetch read it as a hash list) with exit 2 and one line on stderr
// saying how to give it to that command.
func TestCompressedInputOneLine(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	list := []byte(fmt.Sprintf("%040x\n", 1))
	plain, gz := filepath.Join(dir, "l.txt"), filepath.Join(dir, "l.txt.gz")
	if err := os.WriteFile(plain, list, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gz, snifftest.Gzip(t, list), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runMain(t, "dedup", "--data", data, plain); code != 0 {
		t.Fatalf("dedup: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "r.parquet")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dedup", []string{"dedup", "--data", data, gz}, "dedup: " + gz + ": gzip-compressed input; decompress it first (zcat " + gz + " | infohash dedup --data " + data + " -)"},
		{"fetch", []string{"fetch", "--no-dht", gz, "-o", out}, "fetch: " + gz + ": gzip-compressed input; decompress it first (zcat " + gz + " | infohash fetch - -o " + out + "; Parquet jobs: into a file, named as JOBS)"},
		{"merge", []string{"merge", "--data", data, gz}, "merge: " + gz + ": gzip-compressed input; decompress it first (zcat " + gz + " | infohash merge --data " + data + " -)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runMain(t, tt.args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant 2 and one line with %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s written after bad input", out)
			}
		})
	}
}
