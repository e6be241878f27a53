package dedup

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

const hashLine = "0123456789abcdef0123456789abcdef01234567\n"

// gzipped is hashLine gzip-compressed with a name and a modification
// time, whose header (1f 8b 08 08 and the time) then holds no NUL in its
// first 8 bytes: such a file was taken for a hash list.
func gzipped(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name, zw.ModTime = "hashes.txt", time.Unix(0x5f5f5f5f, 0)
	zw.Write([]byte(hashLine))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(b.Bytes()[:8], 0) >= 0 {
		t.Fatalf("gzip header %x holds a NUL", b.Bytes()[:8])
	}
	return b.Bytes()
}

func zstded(t *testing.T) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll([]byte(hashLine), nil)
}

// The first bytes of what bzip2 and xz write (bzip2 -9, xz's stream
// header), which the standard library cannot write.
var (
	bzip2Head = []byte("BZh91AY&SY\x4e\xec\xe8\x36")
	xzHead    = []byte{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46}
	bzip2None = []byte("BZh9\x17\x72\x45\x38\x50\x90\x00\x00\x00\x00") // an empty stream
)

func TestCompressedAs(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want string // "" for none
	}{
		{"gzip", gzipped(t), "gzip"},
		{"zstd", zstded(t), "zstd"},
		{"bzip2", bzip2Head, "bzip2"},
		{"bzip2 empty stream", bzip2None, "bzip2"},
		{"xz", xzHead, "xz"},
		{"hash list", []byte(hashLine), ""},
		{"text starting BZh", []byte("BZh is no hash\n"), ""},
		{"BZh and a digit", []byte("BZh9abcdef"), ""},
		{"gzip's first byte alone", []byte{0x1f, 0x20}, ""},
		{"xz cut short", xzHead[:5], ""},
		{"parquet", []byte("PAR1\x15\x00\x15\x00"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := tt.head[:min(8, len(tt.head))] // what kindOf sees
			got := ""
			if c := compressedAs(head); c != nil {
				got = c.name
			}
			if got != tt.want {
				t.Fatalf("compressedAs(%x) = %q, want %q", head, got, tt.want)
			}
		})
	}
}

// TestCompressedInputRefused: a compressed input, as a file or on stdin,
// is bad input (exit 2) said in one line that names the compression and
// the command that would read it; nothing of the run is committed. A
// gzip file without a NUL in its first 8 bytes used to be read as a hash
// list and fail on its "first line".
func TestCompressedInputRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, err := run(t, data, nil, writeObs(t, dir, genObs(4, 100, 50))); err != nil {
		t.Fatal(err)
	}
	spaced := filepath.Join(dir, "my hashes.txt.gz")
	tests := []struct {
		name    string
		file    string // "" for stdin
		content []byte
		want    string
	}{
		{"gzip", "hashes.txt.gz", gzipped(t), "hashes.txt.gz: gzip-compressed input; decompress it first (zcat " + filepath.Join(dir, "hashes.txt.gz") + " | infohash dedup --data DIR -)"},
		{"gzip, a name with a space", spaced, gzipped(t), "gzip-compressed input; decompress it first (zcat '" + spaced + "' | infohash dedup --data DIR -)"},
		{"zstd", "obs.parquet.zst", zstded(t), "zstd-compressed input; decompress it first (zstdcat "},
		{"bzip2", "hashes.bz2", bzip2Head, "bzip2-compressed input; decompress it first (bzcat "},
		{"xz", "hashes.xz", xzHead, "xz-compressed input; decompress it first (xzcat "},
		{"gzip on stdin", "", gzipped(t), "dedup: stdin (inbox/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh := writeObs(t, t.TempDir(), genObs(99, 10, 10))
			var err error
			if tt.file == "" {
				_, err = run(t, data, func(o *Options) { o.Stdin = bytes.NewReader(tt.content) }, fresh, "-")
				if err != nil && !strings.Contains(err.Error(), "gzip-compressed input; decompress it first (... | zcat | infohash dedup --data DIR -)") {
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
