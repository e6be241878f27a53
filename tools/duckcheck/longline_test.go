package duckcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/infohash/infohash/tools/badpeers"
)

// readmeReader returns README's call of DuckDB function fn on a text
// export ("`read_csv(F, …)`"), F replaced by the quoted path.
func readmeReader(t *testing.T, fn, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ") // a call may span lines
	m := regexp.MustCompile("`(" + fn + `\(F, [^)]*\))` + "`").FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("README gives no `%s(F, …)` for the text exports", fn)
	}
	return strings.Replace(m[1], "F", Quote(path), 1)
}

// TestReadmeReadsLongLines: a fetched torrent's line in a CSV or JSON
// Lines export can be 16 times its info dictionary (a name of "&" is
// \u0026 in JSON, and comes again as a hex name_raw, a path and a hex
// path_raw), longer than DuckDB reads by default (read_csv: 2 MB,
// read_json: 32 MB). README's read_csv and read_json calls read such an
// export whole; the defaults fail on it, or the test proves nothing.
func TestReadmeReadsLongLines(t *testing.T) {
	const nameLen = 2_300_000 // JSON Lines: ~37 MB a line, CSV: ~25 MB
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"long": info(map[string]any{"name": strings.Repeat("&", nameLen), "length": 1, "piece length": 16384,
			"pieces": strings.Repeat("p", 20)}),
	})
	db := duck(t)
	for _, tc := range []struct{ format, fn, bare string }{
		{"csv", "read_csv", "read_csv(%s)"},
		{"jsonl", "read_json", "read_json(%s)"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out := f.export(t, "catalog", tc.format)
			if _, _, err := Rows(db, "SELECT count(*) FROM "+strings.Replace(tc.bare, "%s", Quote(out), 1)); err == nil {
				t.Errorf("DuckDB's %s reads %s with its defaults: the line is not long enough to show README's options matter",
					tc.fn, filepath.Base(out))
			}
			rel := readmeReader(t, tc.fn, out)
			_, rows, err := Rows(db, "SELECT count(*), max(length(name)), count(*) FILTER (WHERE name IS NULL) FROM "+rel)
			if err != nil {
				t.Fatalf("README's %s fails: %v", rel, err)
			}
			if got, want := strings.Join(rows[0], " "), "2 2300000 1"; got != want {
				t.Errorf("%s: rows, longest name, null names %s, want %s", rel, got, want)
			}
		})
	}
}
