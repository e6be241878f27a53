package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFormatFromName: without --format, export writes the format
// -o's extension names (it wrote Parquet into x.csv without a word), and
// refuses an extension that names none (it wrote Parquet into x.out and
// x.csv.gz without a word), listing the known ones; a name without an
// extension is Parquet. A --format given wins, with a warning; --es-index
// outside es-bulk is a usage error (it was ignored).
func TestExportFormatFromName(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ih")
	mustRun(t, []byte(hexLines("fmt", 3)), "dedup", "--data", data, "-")
	for _, tt := range []struct {
		name, out string
		args      []string
		code      int
		head      string // what the file starts with
		warn      string // in stderr
	}{
		{"csv", "x.csv", nil, 0, "info_hash,", ""},
		{"CSV upper case", "x.CSV", nil, 0, "info_hash,", ""},
		{"jsonl", "x.jsonl", nil, 0, `{"info_hash":`, ""},
		{"ndjson", "x.ndjson", nil, 0, `{"info_hash":`, ""},
		{"parquet", "x.parquet", nil, 0, "PAR1", ""},
		{"arrow", "x.arrows", nil, 0, "\xff\xff\xff\xff", ""},
		{"no extension: parquet", "x", nil, 0, "PAR1", ""},
		{"dot file: parquet", ".x", nil, 0, "PAR1", ""},
		{"unknown extension", "x.out", nil, 2, "", `export: -o OUT: unknown extension ".out" (known: .parquet .csv .jsonl .ndjson .arrow .arrows); give --format`},
		{"compressed csv", "x.csv.gz", nil, 2, "", `unknown extension ".gz" (known: .parquet .csv`},
		{"unknown extension, --format", "v.out", []string{"--format", "csv"}, 0, "info_hash,", ""},
		{"given format wins", "y.parquet", []string{"--format", "csv"}, 0, "info_hash,", "names a parquet file, but --format is csv"},
		{"es-index without es-bulk", "z.csv", []string{"--es-index", "ih"}, 2, "", "--es-index is for --format es-bulk, not csv"},
		// It warned first that it was "writing xml" (two lines).
		{"unknown format, a name of another", "w.csv", []string{"--format", "xml"}, 2, "", `export: --format "xml": want one of parquet,`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.out)
			args := append([]string{"export", "--data", data, "-o", out}, tt.args...)
			_, stderr, code := runMain(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, strings.ReplaceAll(tt.warn, "OUT", out)) {
				t.Errorf("stderr %q lacks %q", stderr, tt.warn)
			}
			if tt.code == 2 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want the one line of a usage error", stderr)
			}
			if tt.head == "" {
				if _, err := os.Stat(out); err == nil {
					t.Errorf("a refused export wrote %s", out)
				}
				return
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), tt.head) {
				t.Errorf("%s starts %q, want %q", tt.out, b[:min(len(b), 16)], tt.head)
			}
		})
	}
}
