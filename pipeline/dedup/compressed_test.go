package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/sniff/snifftest"
	"github.com/infohash/infohash/internal/exitcode"
)

const hashLine = "0123456789abcdef0123456789abcdef01234567\n"

// TestCompressedInputRefused: a compressed input, as a file or on stdin,
// is bad input (exit 2) said in one line that names the compression and
// the command that would read it, with the run's --data (shell-quoted:
// it holds a space); nothing of the run is committed. A gzip file without
// a NUL in its first 8 bytes used to be read as a hash list and fail on
// its "first line".
func TestCompressedInputRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "my ds")
	if _, err := run(t, data, nil, writeObs(t, dir, genObs(4, 100, 50))); err != nil {
		t.Fatal(err)
	}
	cmd := " | infohash dedup --data '" + data + "' -)"
	spaced := filepath.Join(dir, "my hashes.txt.gz")
	gz := snifftest.Gzip(t, []byte(hashLine))
	tests := []struct {
		name    string
		file    string // "" for stdin
		content []byte
		want    string
	}{
		{"gzip", "hashes.txt.gz", gz, "hashes.txt.gz: gzip-compressed input; decompress it first (zcat " + filepath.Join(dir, "hashes.txt.gz") + cmd},
		{"gzip, a name with a space", spaced, gz, "gzip-compressed input; decompress it first (zcat '" + spaced + "'" + cmd},
		{"zstd", "obs.parquet.zst", snifftest.Zstd(t, []byte(hashLine)), "zstd-compressed input; decompress it first (zstdcat "},
		{"bzip2", "hashes.bz2", snifftest.Bzip2Head, "bzip2-compressed input; decompress it first (bzcat "},
		{"xz", "hashes.xz", snifftest.XzHead, "xz-compressed input; decompress it first (xzcat "},
		{"gzip on stdin", "", gz, "dedup: stdin (" + filepath.Join(data, "inbox") + "/part-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh := writeObs(t, t.TempDir(), genObs(99, 10, 10))
			var err error
			if tt.file == "" {
				_, err = run(t, data, func(o *Options) { o.Stdin = bytes.NewReader(tt.content) }, fresh, "-")
				if err != nil && !strings.Contains(err.Error(), "gzip-compressed input; decompress it first (... | zcat"+cmd) {
					t.Fatalf("err = %v, want the stdin form of the hint", err)
				}
			} else {
				p := tt.file
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				if werr := os.WriteFile(p, tt.content, 0o644); werr != nil {
					t.Fatal(werr)
				}
				_, err = run(t, data, nil, fresh, p)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line with %q", err, tt.want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
			if m, _ := d.Current(); m.Snapshot != 1 {
				t.Fatalf("bad input committed snapshot %d", m.Snapshot)
			}
		})
	}
}
