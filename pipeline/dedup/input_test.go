package dedup

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestFolderFiles: a folder's input files are those named *.parquet,
// *.arrows or *.arrow in any case; other files are skipped and named in
// an info log line, temporary files at debug level. A folder that holds
// none is no error: one info line says there is nothing to apply.
func TestFolderFiles(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string
		err   string
		info  string // in the info log line; "" for none
	}{
		{"any case", []string{"a.parquet", "sub/B.PARQUET", "c.Parquet"}, []string{"a.parquet", "c.Parquet", "sub/B.PARQUET"}, "", ""},
		{"others skipped", []string{"a.parquet", "notes.txt", "README", ".tmp-b.parquet-1"}, []string{"a.parquet"}, "",
			"skipped=2 files=\"D/README, D/notes.txt\""},
		{"arrow streams", []string{"in/x.arrows", "y.ARROW", "z.Arrows", "w.arrow.txt", ".tmp-v.arrows-2"},
			[]string{"in/x.arrows", "y.ARROW", "z.Arrows"}, "", "skipped=1 files=D/w.arrow.txt"},
		{"only a list", []string{"hashes.txt"}, nil, "", "msg=\"dedup: D: no input files; nothing to apply\" reads=\"*.parquet, *.arrows and *.arrow\" skipped=1 files=D/hashes.txt\n"},
		{"empty", nil, nil, "", "msg=\"dedup: D: no input files; nothing to apply\" reads=\"*.parquet, *.arrows and *.arrow\"\n"},
		{"only temporary files", []string{".tmp-a.parquet-1"}, nil, "", "msg=\"dedup: D: no input files; nothing to apply\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
			got, err := folderFiles(dir)
			out := strings.ReplaceAll(log.String(), dir, "D")
			if tt.err != "" {
				if err == nil || strings.ReplaceAll(err.Error(), dir, "D") != "dedup: "+tt.err || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i], _ = filepath.Rel(dir, got[i])
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("files %q, want %q", got, tt.want)
			}
			if (tt.info == "") != (out == "") || !strings.Contains(out, tt.info) {
				t.Fatalf("log %q, want a line with %q", out, tt.info)
			}
			if strings.Count(out, "\n") > 1 {
				t.Fatalf("log %q, want one line at most", out)
			}
			if strings.Contains(out, ".tmp-") {
				t.Fatalf("temporary files logged at info: %q", out)
			}
		})
	}
}
