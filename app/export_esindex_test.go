package app

import (
	"strings"
	"testing"
)

// TestExportESIndexNames: an --es-index that Elasticsearch refuses for
// any index, alias or data stream is a usage error (exit 2, one line,
// nothing written); export wrote it in every action line, and the bulk
// request failed each document, which `curl -s` in --help's example does
// not show. Names it takes pass into the action lines as given.
func TestExportESIndexNames(t *testing.T) {
	_, data := seedDataset(t)
	tests := map[string]struct {
		index, problem string // problem "": exported
	}{
		"plain":             {"infohash-2026.12", ""},
		"date math":         {"<infohash-{now/d}>", ""},
		"uppercase alias":   {"InfoHash", ""},
		"space":             {"info hash", `"info hash": Elasticsearch refuses an index name holding " "`},
		"comma":             {"a,b", `"a,b": Elasticsearch refuses an index name holding ","`},
		"slash":             {"logs/2026", `"logs/2026": Elasticsearch refuses an index name holding "/"`},
		"quote":             {`a"b`, `"a\"b": Elasticsearch refuses an index name holding "\""`},
		"wildcard":          {"logs-*", `"logs-*": Elasticsearch refuses an index name holding "*"`},
		"hash":              {"a#b", `"a#b": Elasticsearch refuses an index name holding "#"`},
		"leading dash":      {"-x", `"-x": Elasticsearch refuses an index name starting with -`},
		"leading under":     {"_bulk", `"_bulk": Elasticsearch refuses an index name starting with _`},
		"dot dot":           {"..", `"..": Elasticsearch refuses it as an index name`},
		"over 255 bytes":    {strings.Repeat("é", 128), "256 bytes: Elasticsearch refuses an index name over 255"},
		"at most 255 ok":    {strings.Repeat("a", 255), ""},
		"empty (as before)": {"", "empty; es-bulk action lines need an index name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, "export", "--data", data, "-f", "es-bulk", "--es-index", tc.index)
			if tc.problem == "" {
				want := `{"index":{"_id":"0123456789abcdef0123456789abcdef01234567","_index":"` + tc.index + `"}}`
				if code != 0 || !strings.HasPrefix(stdout, want+"\n") {
					t.Fatalf("exit %d, stdout %.200q; want 0 and %s first; stderr %s", code, stdout, want, stderr)
				}
				return
			}
			want := "infohash: export: --es-index: " + tc.problem + "\n"
			if code != 2 || stderr != want || stdout != "" {
				t.Fatalf("exit %d, stderr %q, %d bytes out; want 2 and %q", code, stderr, len(stdout), want)
			}
		})
	}
}
