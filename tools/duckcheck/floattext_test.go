package duckcheck

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTextActivityReadsAsDouble: activity, a DOUBLE, is a whole number
// (1) for every hash sighted once. Written as 1 in csv and jsonl, a
// DuckDB reader that sniffs types from a sample of rows holding only
// such hashes typed it BIGINT and read a later row's 1.99… as 2, silently:
// sum(activity) came out wrong. Written 1.0, it reads as DOUBLE and sums
// to what the Parquet export sums to. (The sample is cut to 100 rows so
// that 3,000 hashes show what DuckDB's default 20,480 does to a big export.)
func TestTextActivityReadsAsDouble(t *testing.T) {
	needCommands(t, "dedup", "export")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var once strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&once, "%040x\n", i+1)
	}
	last := strings.Repeat("f", 40) // sorts last: past any sample
	lists := map[string]string{"once.txt": once.String() + last + "\n", "again.txt": last + "\n"}
	start := time.Now().UTC().Add(-2 * time.Hour)
	for i, name := range []string{"once.txt", "again.txt"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(lists[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		now := start.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
		mustInfohash(t, "dedup", "--data", data, "--now", now, path)
	}
	db := duck(t)
	files := map[string]string{}
	for _, f := range []string{"parquet", "csv", "jsonl"} {
		files[f] = filepath.Join(dir, "state."+f)
		mustInfohash(t, "export", "--data", data, "-o", files[f])
	}
	want := scalar[float64](t, db, "SELECT sum(activity) FROM read_parquet("+Quote(files["parquet"])+")")
	if want == math.Trunc(want) {
		t.Fatalf("sum(activity) %v: the hash sighted again has no fraction to lose", want)
	}
	for _, rel := range []string{
		"read_csv(" + Quote(files["csv"]) + ", sample_size=100)",
		"read_json(" + Quote(files["jsonl"]) + ", sample_size=100)",
	} {
		var typ string
		var sum float64
		if err := db.QueryRow("SELECT any_value(typeof(activity)), sum(activity)::DOUBLE FROM "+rel).Scan(&typ, &sum); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if typ != "DOUBLE" || math.Abs(sum-want) > 1e-9 {
			t.Errorf("%s: activity is %s, sums to %v; want DOUBLE, %v (the Parquet export's)", rel, typ, sum, want)
		}
	}
}
