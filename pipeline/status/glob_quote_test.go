package status

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestDuckDBLinesQuoteDir: the DuckDB and frozen lines are SQL a reader
// pastes, so a quote in DIR's path is doubled in their string literal
// (it ended the literal: "read_parquet('/srv/it's/…')" does not parse),
// and DIR's glob characters match themselves ("[1]" matched "1" alone,
// and no file); the JSON globs stay the plain paths.
func TestDuckDBLinesQuoteDir(t *testing.T) {
	for _, tt := range []struct{ name, folder, inSQL string }{
		{"plain", "data", "data"},
		{"a quote", "it's data", "it''s data"},
		{"two quotes", "'x'", "''x''"},
		{"glob characters", "runs [1] a*b?", "runs [[]1] a[*]b[?]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, tt.folder)
			datasettest.CommitState(t, dir, schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new",
				Tier: "hot"}, 0)
			r, err := Run(context.Background(), dir, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			r.Print(&out)
			opts := ", hive_partitioning=true, hive_types={'prefix': VARCHAR})"
			for _, want := range []string{
				"DuckDB: read_parquet('TOP/" + tt.inSQL + "/state/current/prefix=*/*.parquet'" + opts + "\n",
				"frozen: read_parquet('TOP/" + tt.inSQL + "/state/v/000000000001/prefix=*/*.parquet'" + opts + "\n",
			} {
				if text := strings.ReplaceAll(out.String(), top, "TOP"); !strings.Contains(text, want) {
					t.Errorf("status prints\n%s\nwithout the line\n%s", text[max(0, strings.Index(text, "DuckDB:")):], want)
				}
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if got, want := m["state_glob"], filepath.Join(top, tt.folder, "state", "current", "prefix=*", "*.parquet"); got != want {
				t.Errorf("state_glob %v, want %v", got, want)
			}
		})
	}
}
