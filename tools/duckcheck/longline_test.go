package duckcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/tools/badpeers"
)

// TestDescribeReadersReadLongLines: a fetched torrent's line in a CSV or
// JSON Lines export can be 16 times its info dictionary (a name of "&"
// is \u0026 in JSON, and comes again as a hex name_raw, a path and a hex
// path_raw), longer than DuckDB reads by default (read_csv: 2 MB,
// read_json: 32 MB). The read_csv and read_ndjson calls `export
// --describe` ends with (README points to them) read such an export
// whole; the defaults fail on it, or the test proves nothing.
func TestDescribeReadersReadLongLines(t *testing.T) {
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
				t.Errorf("DuckDB's %s reads %s with its defaults: the line is not long enough to show the options matter",
					tc.fn, filepath.Base(out))
			}
			rel, jsonCall := describeReaders(t, "catalog", out)
			if tc.format == "jsonl" {
				rel = jsonCall
			}
			_, rows, err := Rows(db, "SELECT count(*), max(length(name)), count(*) FILTER (WHERE name IS NULL) FROM "+rel)
			if err != nil {
				t.Fatalf("--describe's %s fails: %v", rel[:min(len(rel), 200)], err)
			}
			if got, want := strings.Join(rows[0], " "), "2 2300000 1"; got != want {
				t.Errorf("%.200s: rows, longest name, null names %s, want %s", rel, got, want)
			}
		})
	}
}
