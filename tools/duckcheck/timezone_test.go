package duckcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextTimesAsDocumented: what README (and export --describe) say of
// the text exports' times in DuckDB's sniffing readers holds, in a
// session whose TimeZone is not UTC: read_json makes them TIMESTAMP, the
// UTC time without its zone (a bare cast to TIMESTAMPTZ takes the
// session's zone: 5 hours off in New York), read_csv TIMESTAMP WITH TIME
// ZONE as the Parquet export has, and timezone('UTC', col) of
// read_json's is the Parquet's instant. (--describe's own calls type
// them TIMESTAMPTZ: TestDescribeReadersTypeEveryColumn.)
func TestTextTimesAsDocumented(t *testing.T) {
	needCommands(t, "dedup", "export")
	readme := strings.Join(strings.Fields(readRepoFile(t, "README.md")), " ")
	if !strings.Contains(readme, "jsonl's times TIMESTAMP of the UTC time (`timezone('UTC', col)`)") {
		t.Fatal("README no longer says how DuckDB reads the text exports' times: update this test with it")
	}
	dir := t.TempDir()
	data, list := filepath.Join(dir, "data"), filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("%040x\n%040x\n", 1, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, "--now", "2026-03-01T12:34:56.789Z", list)
	files := map[string]string{}
	for _, f := range []string{"parquet", "csv", "jsonl"} {
		files[f] = filepath.Join(dir, "state."+f)
		mustInfohash(t, "export", "--data", data, "-o", files[f])
	}
	db := duck(t)
	if _, err := db.Exec("SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	reader := map[string]string{"parquet": "read_parquet", "csv": "read_csv", "jsonl": "read_json"}
	want := map[string]string{"parquet": "TIMESTAMP WITH TIME ZONE", "csv": "TIMESTAMP WITH TIME ZONE", "jsonl": "TIMESTAMP"}
	for f, path := range files {
		typ := scalar[string](t, db, fmt.Sprintf("SELECT DISTINCT typeof(next_retry) FROM %s(%s)", reader[f], Quote(path)))
		if typ != want[f] {
			t.Errorf("DuckDB's %s types next_retry %s, README says %s", reader[f], typ, want[f])
		}
	}
	ref := fmt.Sprintf("(SELECT info_hash, next_retry FROM read_parquet(%s))", Quote(files["parquet"]))
	for _, tc := range []struct {
		name, expr string
		equal      bool
	}{
		{"read_csv", "c.next_retry", true},
		{"read_json, timezone('UTC', col)", "timezone('UTC', j.next_retry)", true},
		{"read_json, a bare cast", "j.next_retry::TIMESTAMPTZ", false},
	} {
		n := scalar[int64](t, db, fmt.Sprintf(`SELECT count(*) FROM %s p
			JOIN read_csv(%s) c ON lower(hex(p.info_hash)) = c.info_hash
			JOIN read_json(%s) j ON lower(hex(p.info_hash)) = j.info_hash
			WHERE p.next_retry = %s`, ref, Quote(files["csv"]), Quote(files["jsonl"]), tc.expr))
		if got := n == 2; got != tc.equal {
			t.Errorf("%s: %d of 2 rows equal the Parquet's next_retry, want equal %v", tc.name, n, tc.equal)
		}
	}
}
