package merge

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/sniff/snifftest"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestCompressedResultsRefused: compressed results, as a file or on
// stdin, are bad input (exit 2) said in one line that names the
// compression and says how to give them to merge (with its --data,
// shell-quoted), and nothing is committed. zstd and xz results used to
// fail as "neither Parquet nor an Arrow IPC stream", gzip and bzip2 ones
// too, without a word of compression. The hint works: the same results
// decompressed on stdin are applied.
func TestCompressedResultsRefused(t *testing.T) {
	h := hashAt(0x42, 1)
	made := makeDataset(t, []schema.State{newHash(h, t0)})
	data := filepath.Join(filepath.Dir(made), "my ds")
	if err := os.Rename(made, data); err != nil {
		t.Fatal(err)
	}
	job := schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}
	parquet, err := os.ReadFile(writeResults(t, []schema.Result{failure(job, schema.OutcomeTimeout, t0+minute)}))
	if err != nil {
		t.Fatal(err)
	}
	gz := snifftest.Gzip(t, parquet)
	dir := t.TempDir()
	cmd := " | infohash merge --data '" + data + "' -)"
	tests := []struct {
		name    string
		file    string // "" for stdin
		content []byte
		want    string // the whole error, but a set-aside note
	}{
		{"gzip", "results.parquet.gz", gz,
			"merge: DIR/results.parquet.gz: gzip-compressed input; decompress it first (zcat DIR/results.parquet.gz" + cmd},
		{"zstd", "results.parquet.zst", snifftest.Zstd(t, parquet),
			"merge: DIR/results.parquet.zst: zstd-compressed input; decompress it first (zstdcat DIR/results.parquet.zst" + cmd},
		{"bzip2", "results.bz2", snifftest.Bzip2Head,
			"merge: DIR/results.bz2: bzip2-compressed input; decompress it first (bzcat DIR/results.bz2" + cmd},
		{"xz, a name with a space", "my results.xz", snifftest.XzHead,
			"merge: DIR/my results.xz: xz-compressed input; decompress it first (xzcat 'DIR/my results.xz'" + cmd},
		{"gzip on stdin", "", gz, "merge: stdin: gzip-compressed input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Data, o.Now, o.Inputs = data, tm(t0+hour), []string{"-"}
			if tt.file == "" {
				o.Stdin = bytes.NewReader(tt.content)
			} else {
				o.Inputs[0] = filepath.Join(dir, tt.file)
				if err := os.WriteFile(o.Inputs[0], tt.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Run(context.Background(), o)
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant one line starting %s", err, want)
			}
			if tt.file == "" {
				if stream := "gzip-compressed input; decompress it first (... | zcat" + cmd + " (set aside as " + filepath.Join(data, inboxDir) + "/"; !strings.Contains(err.Error(), stream) {
					t.Fatalf("err = %v, want the stream form of the hint: %s", err, stream)
				}
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			if snap := datasettest.Snapshot(t, data); snap != 1 {
				t.Fatalf("bad input committed snapshot %d", snap)
			}
		})
	}

	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Stdin = data, tm(t0+hour), []string{"-"}, io.Reader(zr)
	if st, err := Run(context.Background(), o); err != nil || st.Results != 1 || st.Snapshot != 2 {
		t.Fatalf("the hint's pipe: %+v, %v", st, err)
	}
}
