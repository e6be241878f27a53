package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputNameNotParquet: capture and fetch write -o FILE as Parquet
// unless it is named *.arrows or *.arrow; a FILE named as another format
// export writes (.csv, .jsonl, .ndjson) gets a warning saying so, and is
// still written, exit 0. They wrote Parquet into obs.csv without a word
// (export refuses or warns on such names). Names that say no format get
// no warning.
func TestOutputNameNotParquet(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "none.txt")
	if err := os.WriteFile(list, []byte("# no jobs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, out string
		args      []string
		warn      string // "" for none
	}{
		{"fetch csv", "r.csv", []string{"fetch", list, "--no-dht"}, "fetch: -o R names a csv file, but fetch writes Parquet"},
		{"fetch jsonl", "r.JSONL", []string{"fetch", list, "--no-dht"}, "fetch: -o R names a jsonl file, but fetch writes Parquet"},
		{"fetch ndjson", "r.ndjson", []string{"fetch", list, "--no-dht"}, "fetch: -o R names a jsonl file, but fetch writes Parquet"},
		{"fetch parquet", "r.parquet", []string{"fetch", list, "--no-dht"}, ""},
		{"fetch no extension", "results", []string{"fetch", list, "--no-dht"}, ""},
		{"fetch dated", "r.20261207", []string{"fetch", list, "--no-dht"}, ""},
		{"capture csv", "obs.csv", []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms"},
			"capture: -o R names a csv file, but capture writes Parquet"},
		{"capture parquet", "obs.parquet", []string{"capture", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1ms"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.out)
			args := append(append([]string{}, tt.args...), "-o", out)
			if tt.args[0] == "capture" {
				args = append(args, "--dht-state", filepath.Join(filepath.Dir(out), "dht"))
			}
			_, stderr, code := runMain(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("-o %s not written: %v", tt.out, err)
			}
			warned := strings.Contains(stderr, "level=WARN") && strings.Contains(stderr, "writes Parquet")
			switch want := strings.ReplaceAll(tt.warn, " R ", " "+out+" "); {
			case want == "" && warned:
				t.Errorf("a warning for -o %s:\n%s", tt.out, stderr)
			case want != "" && !strings.Contains(stderr, want):
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		})
	}
}
