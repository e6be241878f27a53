package inputdir

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestList: a folder's input files are those named *.parquet, *.arrows
// or *.arrow in any case, at any depth; temporary files of writes in
// progress and other files are listed apart. Files says in one info line
// at most what it skipped, or that the folder holds nothing to apply;
// Empty tells such a folder without a word.
func TestList(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		want   []string
		others []string
		temps  []string
		info   string // in Files' info log line; "" for none
	}{
		{"any case", []string{"a.parquet", "sub/B.PARQUET", "c.Parquet"}, []string{"a.parquet", "c.Parquet", "sub/B.PARQUET"}, nil, nil, ""},
		{"others skipped", []string{"a.parquet", "notes.txt", "README", ".tmp-b.parquet-1"}, []string{"a.parquet"},
			[]string{"README", "notes.txt"}, []string{".tmp-b.parquet-1"}, "skipped=2 files=\"D/README, D/notes.txt\" why=W"},
		{"arrow streams", []string{"in/x.arrows", "y.ARROW", "z.Arrows", "w.arrow.txt", ".tmp-v.arrows-2"},
			[]string{"in/x.arrows", "y.ARROW", "z.Arrows"}, []string{"w.arrow.txt"}, []string{".tmp-v.arrows-2"}, "skipped=1 files=D/w.arrow.txt"},
		{"only a list", []string{"hashes.txt"}, nil, []string{"hashes.txt"}, nil,
			"msg=\"cmd: D: no input files; nothing to apply\" reads=\"*.parquet, *.arrows and *.arrow\" skipped=1 files=D/hashes.txt\n"},
		{"empty", nil, nil, nil, nil, "msg=\"cmd: D: no input files; nothing to apply\" reads=\"*.parquet, *.arrows and *.arrow\"\n"},
		{"only temporary files", []string{".tmp-a.parquet-1"}, nil, nil, []string{".tmp-a.parquet-1"}, "msg=\"cmd: D: no input files; nothing to apply\""},
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
			files, others, temps, err := List(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []struct {
				what      string
				got, want []string
			}{{"files", files, tt.want}, {"others", others, tt.others}, {"temps", temps, tt.temps}} {
				for i := range got.got {
					got.got[i], _ = filepath.Rel(dir, got.got[i])
				}
				if !slices.Equal(got.got, got.want) {
					t.Fatalf("%s %q, want %q", got.what, got.got, got.want)
				}
			}
			if Empty(dir) != (len(tt.want) == 0) {
				t.Fatalf("Empty = %v, want %v", Empty(dir), len(tt.want) == 0)
			}

			var log bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo})))
			got, err := Files("cmd", dir, "W")
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("Files = %q, %v; want %d files", got, err, len(tt.want))
			}
			out := strings.ReplaceAll(log.String(), dir, "D")
			if (tt.info == "") != (out == "") || !strings.Contains(out, tt.info) {
				t.Fatalf("log %q, want a line with %q", out, tt.info)
			}
			if strings.Count(out, "\n") > 1 || strings.Contains(out, ".tmp-") {
				t.Fatalf("log %q, want one line at most, no temporary file", out)
			}
		})
	}
}

// TestListErrors: a folder through a symbolic link is walked as that
// folder, with or without a trailing slash; a missing one is an error
// that names it (Files: after the command's name), and is not Empty, nor
// is a file.
func TestListErrors(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.parquet", "sub/b.arrows", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(real, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "in")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{link, link + "/"} {
		got, _, _, err := List(name)
		want := []string{filepath.Join(link, "a.parquet"), filepath.Join(link, "sub", "b.arrows")}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("List(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := Files("cmd", missing, ""); err == nil || !strings.HasPrefix(err.Error(), "cmd: "+missing+": ") {
		t.Fatalf("err = %v, want one starting %q", err, "cmd: "+missing+": ")
	}
	if Empty(missing) || Empty(filepath.Join(real, "notes.txt")) {
		t.Fatal("a missing path or a file taken for an empty folder")
	}
}

// TestListFIFO: a FIFO named like an input file, or a link to one,
// is an error that names it (a command would block opening it); List
// only stats it. A FIFO of another name is skipped as others are, a link
// to a file is listed, and so is a link that leads nowhere (the command's
// read says why).
func TestListFIFO(t *testing.T) {
	tests := []struct {
		name  string
		fifo  string            // made a FIFO in the folder
		links map[string]string // link name: target (in the folder)
		want  []string          // files
		bad   string            // the entry the error names; "" for none
	}{
		{"FIFO named as a stream", "b.arrows", nil, nil, "b.arrows"},
		{"link to a FIFO", "pipe", map[string]string{"c.parquet": "pipe"}, nil, "c.parquet"},
		{"FIFO of another name", "b.fifo", nil, []string{"a.parquet"}, ""},
		{"link to a file", "", map[string]string{"c.parquet": "a.parquet"}, []string{"a.parquet", "c.parquet"}, ""},
		{"link to nothing", "", map[string]string{"c.parquet": "gone"}, []string{"a.parquet", "c.parquet"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "a.parquet"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.fifo != "" {
				if err := unix.Mkfifo(filepath.Join(dir, tt.fifo), 0o644); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
			}
			for name, to := range tt.links {
				if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			files, _, _, err := List(dir)
			_, ferr := Files("cmd", dir, "W")
			if tt.bad != "" {
				want := filepath.Join(dir, tt.bad) + ": not a regular file (a pipe)"
				if err == nil || !strings.HasPrefix(err.Error(), want) || ferr == nil || !strings.HasPrefix(ferr.Error(), "cmd: "+want) {
					t.Fatalf("List: %v; Files: %v; want errors starting %q", err, ferr, want)
				}
				if Empty(dir) {
					t.Fatal("a folder that holds a FIFO taken for an empty folder")
				}
				return
			}
			for i := range files {
				files[i], _ = filepath.Rel(dir, files[i])
			}
			if err != nil || ferr != nil || !slices.Equal(files, tt.want) {
				t.Fatalf("List = %q, %v; Files: %v; want %q, no error", files, err, ferr, tt.want)
			}
		})
	}
}

func TestSomeNames(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	for _, tt := range []struct {
		n    int
		want string
	}{{0, ""}, {2, "a, b"}, {10, "a, b, c, d, e, f, g, h, i, j"}, {12, "a, b, c, d, e, f, g, h, i, j and 2 more"}} {
		if got := SomeNames(names[:tt.n]); got != tt.want {
			t.Errorf("SomeNames(%d names) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
