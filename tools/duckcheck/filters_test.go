package duckcheck

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// checkFilters exports the catalog with each filter and compares the
// hashes kept with the rows of the table the filter selects.
func checkFilters(t *testing.T, c *crawl, catalog tableRef) {
	var fetched, failed string
	for h, r := range catalog.rows {
		switch r["metadata_status"] {
		case "fetched":
			fetched = h
		case "failed":
			failed = h
		}
	}
	if fetched == "" || failed == "" {
		t.Fatalf("the catalog needs a fetched and a failed hash (fetched %q, failed %q)", fetched, failed)
	}
	blocked := filepath.Join(c.work, "blocked.txt")
	if err := os.WriteFile(blocked, []byte("# two hashes\n"+fetched+"\n  "+strings.ToUpper(failed)+"  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	digit := fetched[:1]
	tests := []struct {
		name string
		args []string
		keep func(h string, r map[string]string) bool
	}{
		{"status fetched", []string{"--status", "fetched"},
			func(_ string, r map[string]string) bool { return r["metadata_status"] == "fetched" }},
		{"status failed or new", []string{"--status", "failed", "--status", "new"},
			func(_ string, r map[string]string) bool { return r["metadata_status"] != "fetched" }},
		{"prefix " + digit, []string{"--prefix", digit},
			func(h string, _ map[string]string) bool { return strings.HasPrefix(h, digit) }},
		{"blocklist file", []string{"--blocklist", blocked},
			func(h string, _ map[string]string) bool { return h != fetched && h != failed }},
		{"tier hot", []string{"--tier", "hot"},
			func(_ string, r map[string]string) bool { return r["tier"] == "hot" }},
		{"since the future", []string{"--since", "2999-01-01T00:00:00Z"},
			func(string, map[string]string) bool { return false }},
		{"fetched since the epoch", []string{"--fetched-since", "1970-01-01T00:00:00Z"},
			func(_ string, r map[string]string) bool { return r["fetched_at"] != "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"export", "--data", c.data, "--table", "catalog", "--format", "magnet", "-o", "-"}, tc.args...)
			var got, want []string
			for _, line := range strings.Fields(mustInfohash(t, args...)) {
				h, _, _ := strings.Cut(strings.TrimPrefix(line, "magnet:?xt=urn:btih:"), "&")
				got = append(got, h)
			}
			for h, r := range catalog.rows {
				if tc.keep(h, r) {
					want = append(want, h)
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("kept %d hashes %v, want %d %v", len(got), got, len(want), want)
			}
		})
	}
	// DIR/blocklist applies to every export.
	dirList := filepath.Join(c.data, "blocklist")
	if err := os.WriteFile(dirList, []byte(fetched+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dirList)
	out := mustInfohash(t, "export", "--data", c.data, "--table", "torrents", "--format", "magnet")
	nfetched := 0
	for _, r := range catalog.rows {
		if r["metadata_status"] == "fetched" {
			nfetched++
		}
	}
	if strings.Contains(out, fetched) || strings.Count(out, "\n") != nfetched-1 {
		t.Errorf("with %s in DIR/blocklist, the torrents export (%d fetched) is:\n%s", fetched, nfetched, out)
	}
}

// checkEmptyExports exports no rows in every format: each output is still
// valid (a Parquet file and an Arrow stream with the schema, a CSV header).
func checkEmptyExports(t *testing.T, db *sql.DB, c *crawl, ref tableRef) {
	since := "--since" // last_seen, which torrents lack: theirs is fetched_at
	if ref.name == "torrents" {
		since = "--fetched-since"
	}
	for _, format := range []string{"parquet", "csv", "jsonl", "arrow", "magnet", "es-bulk"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(c.work, "empty-"+ref.name+"."+format)
			mustInfohash(t, "export", "--data", c.data, "--table", ref.name, "--format", format,
				since, "2999-01-01T00:00:00Z", "-o", out)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			cols := slices.DeleteFunc(slices.Clone(ref.cols), func(c string) bool { return slices.Contains(formatSkips[format], c) })
			switch format {
			case "parquet":
				if got, _ := describe(t, db, "read_parquet("+Quote(out)+")"); !slices.Equal(got, cols) {
					t.Errorf("columns %v, want %v", got, cols)
				}
				if n := scalar[int64](t, db, "SELECT count(*) FROM read_parquet("+Quote(out)+")"); n != 0 {
					t.Errorf("%d rows", n)
				}
			case "csv":
				if want := strings.Join(cols, ",") + "\n"; string(b) != want {
					t.Errorf("empty CSV is %q, want just the header %q", b, want)
				}
			case "arrow":
				r, err := ipc.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("not an Arrow IPC stream: %v", err)
				}
				defer r.Release()
				if n := len(r.Schema().Fields()); n != len(cols) {
					t.Errorf("stream schema has %d fields, want %d", n, len(cols))
				}
				for r.Next() {
					if r.Record().NumRows() > 0 {
						t.Errorf("stream has rows")
					}
				}
				if err := r.Err(); err != nil {
					t.Error(err)
				}
			default:
				if len(b) != 0 {
					t.Errorf("%d bytes, want none", len(b))
				}
			}
		})
	}
}
