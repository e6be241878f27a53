package duckcheck

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

// DuckDB reads both generated layouts with the types an analyst expects,
// and its counts agree with the generator's ground truth.
func TestDuckDBReadsGeneratedFiles(t *testing.T) {
	tests := []struct {
		name     string
		style    obsgen.Style
		hashType string // physical type of info_hash
		tsType   string // DuckDB type of observed_at
	}{
		{"native", obsgen.Native, "FIXED_LEN_BYTE_ARRAY", "TIMESTAMP WITH TIME ZONE"},
		{"duckdb style", obsgen.DuckDB, "BYTE_ARRAY", "TIMESTAMP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, tr := generate(t, dir, "obs.parquet", config(50_000, func(c *obsgen.Config) {
				c.Known, c.Distinct = 3_000, 8_000
			}), tc.style)
			db := duck(t)
			src := "read_parquet(" + Quote(in) + ")"
			if got := scalar[string](t, db, "SELECT type FROM parquet_schema("+Quote(in)+") WHERE name = 'info_hash'"); got != tc.hashType {
				t.Errorf("info_hash stored as %s, want %s", got, tc.hashType)
			}
			if got := scalar[string](t, db, "SELECT typeof(observed_at) FROM "+src+" LIMIT 1"); got != tc.tsType {
				t.Errorf("observed_at read as %s, want %s", got, tc.tsType)
			}
			var n, d, lo, hi, v2, top int64
			err := db.QueryRow(`SELECT count(*), count(DISTINCT info_hash),
				epoch_ms(min(observed_at)), epoch_ms(max(observed_at)),
				count(DISTINCT info_hash) FILTER (hash_type = 2),
				count(*) FILTER (lower(hex(info_hash)) = `+Quote(tr.TopHash)+`)
				FROM `+src).Scan(&n, &d, &lo, &hi, &v2, &top)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				got, want int64
			}{
				{"rows", n, tr.Rows}, {"distinct", d, tr.Distinct},
				{"min observed_at", lo, tr.MinObservedAt}, {"max observed_at", hi, tr.MaxObservedAt},
				{"v2 distinct", v2, tr.V2Distinct}, {"top hash count", top, tr.TopCount},
			} {
				if c.got != c.want {
					t.Errorf("%s: DuckDB counts %d, ground truth %d", c.what, c.got, c.want)
				}
			}
		})
	}
}

// DuckDB's COPY layout is what copyAsDuckDB's callers rely on.
func TestCopyAsDuckDBLayout(t *testing.T) {
	dir := t.TempDir()
	in, tr := generate(t, dir, "obs.parquet", config(2_000, nil), obsgen.Native)
	out := filepath.Join(dir, "duck.parquet")
	copyAsDuckDB(t, in, out, "info_hash::BLOB")
	db := duck(t)
	var n int64
	var lo time.Time
	if err := db.QueryRow("SELECT count(*), min(observed_at) FROM read_parquet("+Quote(out)+")").Scan(&n, &lo); err != nil {
		t.Fatal(err)
	}
	if n != tr.Rows || lo.UnixMilli() != tr.MinObservedAt {
		t.Fatalf("copy has %d rows from %v, want %d from %v", n, lo, tr.Rows, tr.MinTime())
	}
}
