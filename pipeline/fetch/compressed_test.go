package fetch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/sniff/snifftest"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestCompressedJobsRefused: compressed jobs, as a file or on stdin, are
// bad input (exit 2) said in one line that names the compression and
// says how to give them to fetch (with its -o, shell-quoted), and no
// results are written. A gzip hash list without a NUL in its first 8
// bytes used to be read as a hash list and fail on its "line 1"; zstd
// and xz as "neither Parquet jobs, ...".
func TestCompressedJobsRefused(t *testing.T) {
	const hashLine = "0123456789abcdef0123456789abcdef01234567\n"
	gz := snifftest.Gzip(t, []byte(hashLine))
	const note = "; Parquet jobs: into a file, named as JOBS)"
	tests := []struct {
		name    string
		file    string // "" for stdin
		out     string
		content []byte
		want    string // after "fetch: ", with DIR for the test's folder
	}{
		{"gzip", "jobs.txt.gz", "out.parquet", gz,
			"DIR/jobs.txt.gz: gzip-compressed input; decompress it first (zcat DIR/jobs.txt.gz | infohash fetch - -o DIR/out.parquet" + note},
		{"zstd", "jobs.parquet.zst", "out.parquet", snifftest.Zstd(t, []byte("PAR1")),
			"DIR/jobs.parquet.zst: zstd-compressed input; decompress it first (zstdcat DIR/jobs.parquet.zst | infohash fetch - -o DIR/out.parquet" + note},
		{"bzip2", "jobs.bz2", "out.parquet", snifftest.Bzip2Head,
			"DIR/jobs.bz2: bzip2-compressed input; decompress it first (bzcat DIR/jobs.bz2 | infohash fetch - -o DIR/out.parquet" + note},
		{"xz, names with spaces", "my jobs.xz", "my results.parquet", snifftest.XzHead,
			"DIR/my jobs.xz: xz-compressed input; decompress it first (xzcat 'DIR/my jobs.xz' | infohash fetch - -o 'DIR/my results.parquet'" + note},
		{"gzip on stdin", "", "out.parquet", gz,
			"stdin: gzip-compressed input; decompress it first (... | zcat | infohash fetch - -o DIR/out.parquet" + note},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions()
			o.Input, o.Output = "-", filepath.Join(dir, tt.out)
			if tt.file == "" {
				o.Stdin = bytes.NewReader(tt.content)
			} else {
				o.Input = filepath.Join(dir, tt.file)
				if err := os.WriteFile(o.Input, tt.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Run(context.Background(), o)
			want := "fetch: " + strings.ReplaceAll(tt.want, "DIR", dir)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant   %s", err, want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			if _, serr := os.Stat(o.Output); !os.IsNotExist(serr) {
				t.Fatalf("bad input wrote %s (%v)", o.Output, serr)
			}
		})
	}
}
