package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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
// and no file), in the JSON globs too (they were the plain paths: no
// glob matched). DuckDB has no pattern for a backslash (it splits there):
// the lines then read from DIR, and say so (tools/duckcheck runs them).
func TestDuckDBLinesQuoteDir(t *testing.T) {
	const fromDIR = "from DIR (DuckDB's globs cannot match the backslash in its path: cd there first) "
	for _, tt := range []struct{ name, folder, inSQL, inJSON string }{
		{"plain", "data", "TOP/data/", "data"},
		{"a quote", "it's data", "TOP/it''s data/", "it's data"},
		{"two quotes", "'x'", "TOP/''x''/", "'x'"},
		{"glob characters", "runs [1] a*b?", "TOP/runs [[]1] a[*]b[?]/", "runs [[]1] a[*]b[?]"},
		{"a backslash", `a\b`, "", `a\b`},
		{"a backslash and glob characters", `a\[1]`, "", `a\[[]1]`},
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
			from := ""
			if tt.inSQL == "" {
				from = fromDIR
			}
			for _, want := range []string{
				"DuckDB: " + from + "read_parquet('" + tt.inSQL + "state/current/prefix=*/*.parquet'" + opts + "\n",
				"frozen: " + from + "read_parquet('" + tt.inSQL + "state/v/000000000001/prefix=*/*.parquet'" + opts + "\n",
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
			if got, want := m["state_glob"], filepath.Join(top, tt.inJSON, "state", "current", "prefix=*", "*.parquet"); got != want {
				t.Errorf("state_glob %v, want %v", got, want)
			}
			if got, want := m["frozen_state_glob"], filepath.Join(top, tt.inJSON, "state", "v", "000000000001", "prefix=*", "*.parquet"); got != want {
				t.Errorf("frozen_state_glob %v, want %v", got, want)
			}
		})
	}
}

// TestDuckDBLinesAbsolute: the DuckDB and frozen lines of a DIR given
// relative (--data rel/dir) read by DIR's absolute path, as DuckDB started
// in another folder resolves a relative one there and reads nothing (they
// printed 'rel/dir/state/…'). A backslash in the working directory alone
// makes them read from DIR too, as in DIR's own name. The globs of
// --format json are absolute as well.
func TestDuckDBLinesAbsolute(t *testing.T) {
	const fromDIR = "from DIR (DuckDB's globs cannot match the backslash in its path: cd there first) "
	for _, tt := range []struct{ name, cwd, rel, inSQL string }{
		{"relative", "", "rel/data", "TOP/rel/data/"},
		{"dot", "rel/data", ".", "TOP/rel/data/"},
		{"up and down", "rel/x", "../data", "TOP/rel/data/"},
		{"glob characters", "", "rel/[1]", "TOP/rel/[[]1]/"},
		{"a backslash in the working directory", `w\d`, "data", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			cwd := filepath.Join(top, tt.cwd)
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(cwd)
			if err := os.MkdirAll(filepath.Dir(tt.rel), 0o755); err != nil {
				t.Fatal(err)
			}
			datasettest.CommitState(t, tt.rel, schema.State{InfoHash: schema.Hash{0, 1}, HashType: 1,
				MetadataStatus: "new", Tier: "hot"}, 0)
			r, err := Run(context.Background(), tt.rel, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			r.Print(&out)
			opts := ", hive_partitioning=true, hive_types={'prefix': VARCHAR})"
			from := ""
			if tt.inSQL == "" {
				from = fromDIR
			}
			text := strings.ReplaceAll(out.String(), top, "TOP")
			for _, want := range []string{
				"DuckDB: " + from + "read_parquet('" + tt.inSQL + "state/current/prefix=*/*.parquet'" + opts + "\n",
				"frozen: " + from + "read_parquet('" + tt.inSQL + "state/v/000000000001/prefix=*/*.parquet'" + opts + "\n",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("status prints\n%s\nwithout the line\n%s", text[max(0, strings.Index(text, "DuckDB:")):], want)
				}
			}
			// JSON's globs read by the absolute path too (they were
			// 'rel/data/state/…', which reads nothing elsewhere); the
			// report's dir stays as given, as the text's dataset line
			// prints it (JSON's is absolute: TestJSONPathsAbsolute).
			abs := filepath.Join(top, tt.cwd, tt.rel)
			if r.Dir != tt.rel {
				t.Errorf("report's dir %q, want it as given (%q)", r.Dir, tt.rel)
			}
			if want := globUnder(abs, "state", "current", "prefix=*", "*.parquet"); r.StateGlob == nil || *r.StateGlob != want {
				t.Errorf("state_glob %s, want %q", orNull(r.StateGlob), want)
			}
			if want := globUnder(abs, "state", "v", "000000000001", "prefix=*", "*.parquet"); r.FrozenGlob == nil || *r.FrozenGlob != want {
				t.Errorf("frozen_state_glob %s, want %q", orNull(r.FrozenGlob), want)
			}
		})
	}
}

// orNull is *s quoted, or null for nil.
func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}
