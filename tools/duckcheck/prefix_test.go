package duckcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// prefixRead matches a read_parquet call over the current state's or
// torrents' prefix= folders: the glob from the table's folder on (group
// 1) and the options (group 2; the hive_types value holds no parenthesis).
var prefixRead = regexp.MustCompile(`read_parquet\('[^']*?((?:state|torrents)/current/prefix=\*/\*\.parquet)'([^)]*)\)`)

// hiveTypesOpt matches the hive_types option of a read_parquet call.
var hiveTypesOpt = regexp.MustCompile(`,\s*hive_types\s*=\s*\{[^}]*\}`)

// printedReads returns the read_parquet calls over prefix= globs that
// text holds, their path before the table's folder replaced by data.
func printedReads(text, data string) []string {
	var out []string
	for _, m := range prefixRead.FindAllStringSubmatch(text, -1) {
		out = append(out, "read_parquet("+Quote(filepath.Join(data, m[1]))+m[2]+")")
	}
	return out
}

// TestPrefixIsText: every read of a partitioned table that README, the
// scripts and status print gives the prefix column as text, on a dataset
// whose only partitions look numeric (prefix=12 in state and torrents).
// DuckDB infers a hive column's type from the folders present, so such a
// dataset read without hive_types has a BIGINT prefix (12, not '12'), on
// which prefix = 'ab' fails: the test checks that too, so it proves the
// option matters on the DuckDB it runs.
func TestPrefixIsText(t *testing.T) {
	needCommands(t, "dedup", "status")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("12%038x\n12%038x\n", 1, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, list)
	addTorrent(t, data, schema.Hash{0x12, 0x34})

	type source struct {
		reads []string
		want  int // how many reads the source holds
	}
	sources := map[string]source{
		"README":                 {printedReads(strings.Join(readmeQueries(t, data), "\n"), data), 3},
		"duckcheck's globs":      {[]string{StateGlob(data), torrentsGlob(data)}, 2},
		"scripts/demo.sh":        {printedReads(readRepoFile(t, "scripts/demo.sh"), data), 2},
		"scripts/bench-dedup.sh": {printedReads(readRepoFile(t, "scripts/bench-dedup.sh"), data), 2},
	}
	// status prints the reads of its dataset's state, current and frozen.
	var status []string
	for _, line := range strings.Split(mustInfohash(t, "status", "--data", data), "\n") {
		for _, label := range []string{"DuckDB: ", "frozen: "} {
			if rel, ok := strings.CutPrefix(line, label); ok && strings.HasPrefix(rel, "read_parquet(") {
				status = append(status, rel)
			}
		}
	}
	sources["infohash status"] = source{status, 2}

	db := duck(t)
	for name, src := range sources {
		if len(src.reads) != src.want {
			t.Errorf("%s: %d reads of prefix= folders found, want %d: %q", name, len(src.reads), src.want, src.reads)
		}
		for _, rel := range src.reads {
			_, rows, err := Rows(db, "SELECT typeof(prefix), prefix FROM "+rel+" GROUP BY ALL")
			if err != nil || len(rows) != 1 || rows[0][0] != "VARCHAR" || rows[0][1] != "12" {
				t.Errorf("%s: prefix as (type, value) %v, %v; want one row, VARCHAR 12:\n%s", name, rows, err, rel)
			}
			var n int64
			if err := db.QueryRow("SELECT count(*) FROM " + rel + " WHERE prefix = 'ab'").Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: a filter on prefix 'ab': %d rows, %v:\n%s", name, n, err, rel)
			}
			bare := hiveTypesOpt.ReplaceAllString(rel, "")
			if bare == rel {
				t.Errorf("%s: no hive_types in %s", name, rel)
				continue
			}
			if typ := scalar[string](t, db, "SELECT DISTINCT typeof(prefix) FROM "+bare); typ != "BIGINT" {
				t.Errorf("%s: without hive_types DuckDB reads prefix=12 as %s, not BIGINT: this test no longer shows "+
					"why the option is needed\n%s", name, typ, bare)
			}
		}
	}
}

// readRepoFile returns a file of the repository, by its path from the
// top.
func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
