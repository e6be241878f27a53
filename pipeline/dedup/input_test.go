package dedup

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// TestFolderFiles: what folderFiles adds to inputdir.Files (whose own
// test covers the listing): its log lines are dedup's, the line naming
// the files it skips says to name a text list as an input of its own, and
// a folder it cannot walk is bad input (exit 2) named after "dedup: ".
func TestFolderFiles(t *testing.T) {
	tests := []struct {
		name  string
		files []string // nil: the folder is missing
		want  int      // files listed
		err   string   // the error's start, D for the folder; "" for none
		info  string   // in the info log line
	}{
		{"others skipped", []string{"a.parquet", "notes.txt"}, 1, "",
			`msg="dedup: skipped files of a folder that are not *.parquet, *.arrows and *.arrow" folder=D skipped=1 files=D/notes.txt ` +
				`why="a folder is read for its Parquet and Arrow files; name a text list as an input of its own"`},
		{"only a list", []string{"hashes.txt"}, 0, "", `msg="dedup: D: no input files; nothing to apply"`},
		{"missing", nil, 0, "dedup: D: ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "in")
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
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(strings.ReplaceAll(err.Error(), dir, "D"), tt.err) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err = %v (exit %d), want exit 2 starting %q", err, exitcode.Of(err), tt.err)
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("files %q, %v; want %d files", got, err, tt.want)
			}
			if out := strings.ReplaceAll(log.String(), dir, "D"); !strings.Contains(out, tt.info) {
				t.Fatalf("log %q, want a line with %q", out, tt.info)
			}
		})
	}
}

// TestEmptyInputHint: an empty input is bad input (exit 2) naming it; on
// stdin the error adds what merge and fetch add (sniff.EmptyHint), that
// nothing came through the pipe, which dedup used to leave out. An empty
// file says it alone.
func TestEmptyInputHint(t *testing.T) {
	const hint = "(nothing came through the pipe: did the command before it fail?)"
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		input string
		want  string
		piped bool
	}{
		{"stdin", "-", "dedup: stdin: empty input " + hint, true},
		{"file", empty, "dedup: " + empty + ": empty input", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.Stdin = bytes.NewReader(nil) }, tt.input)
			if err == nil || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("error %v (exit %d), want bad input", err, exitcode.Of(err))
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), hint) != tt.piped {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
}
