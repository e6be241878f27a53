package duckcheck

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// stateWant is what the committed state of a dataset must hold.
type stateWant struct {
	hashes int64 // rows = distinct hashes
	seen   int64 // sum(seen_count) = observations applied
	// first and last are the expected min(first_seen) and max(last_seen)
	// in UTC milliseconds (0 = not checked).
	first, last int64
	v2          int64 // rows with hash_type 2 (-1 = not checked)
}

// checkState loads dataset dir through the documented glob and checks
// counts, sums, bounds, column types, partitioning and order.
func checkState(t *testing.T, db *sql.DB, dir string, w stateWant) {
	t.Helper()
	glob := StateGlob(dir)

	types := map[string]string{}
	_, rows, err := Rows(db, "DESCRIBE SELECT * FROM "+glob)
	if err != nil {
		t.Fatalf("DuckDB cannot read the state through %s: %v", glob, err)
	}
	for _, r := range rows {
		types[r[0]] = r[1]
	}
	for col, ok := range map[string][]string{
		"info_hash":       {"BLOB"},
		"hash_type":       {"TINYINT"},
		"first_seen":      {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"},
		"last_seen":       {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"},
		"seen_count":      {"BIGINT"},
		"last_source":     {"VARCHAR"},
		"activity":        {"DOUBLE"},
		"metadata_status": {"VARCHAR"},
		"attempts":        {"INTEGER"},
		"next_retry":      {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"},
		"tier":            {"VARCHAR"},
		"prefix":          {"VARCHAR"},
	} {
		got, present := types[col]
		if !present {
			t.Errorf("state has no column %s (columns: %v)", col, types)
			continue
		}
		if !contains(ok, got) {
			t.Errorf("column %s is %s, want one of %v", col, got, ok)
		}
	}

	var n, distinct, seen, first, last, badLen, badPrefix, v2, badV2, notNew int64
	err = db.QueryRow(`SELECT count(*), count(DISTINCT info_hash), sum(seen_count),
		epoch_ms(min(first_seen)), epoch_ms(max(last_seen)),
		count(*) FILTER (octet_length(info_hash) <> 20),
		count(*) FILTER (prefix::VARCHAR <> lower(substr(hex(info_hash), 1, 2))),
		count(*) FILTER (hash_type = 2),
		count(*) FILTER (hash_type = 2 AND (info_hash_v2 IS NULL OR octet_length(info_hash_v2) <> 32
			OR substr(hex(info_hash_v2), 1, 40) <> hex(info_hash))),
		count(*) FILTER (metadata_status IS DISTINCT FROM 'new')
		FROM `+glob).Scan(&n, &distinct, &seen, &first, &last, &badLen, &badPrefix, &v2, &badV2, &notNew)
	if err != nil {
		t.Fatalf("state summary: %v", err)
	}
	check := func(what string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: state has %d, want %d", what, got, want)
		}
	}
	check("rows (one per distinct hash)", n, w.hashes)
	check("distinct info_hash", distinct, n)
	check("sum(seen_count)", seen, w.seen)
	check("info_hash not 20 bytes", badLen, 0)
	check("rows whose prefix= partition is not the hash's first byte", badPrefix, 0)
	check("metadata_status other than new", notNew, 0)
	if w.first != 0 {
		check("min(first_seen) ms", first, w.first)
	}
	if w.last != 0 {
		check("max(last_seen) ms", last, w.last)
	}
	if w.v2 >= 0 {
		check("hash_type = 2 rows", v2, w.v2)
		check("v2 rows without their 32-byte info_hash_v2", badV2, 0)
	}

	// Each partition file is sorted by info_hash.
	unsorted := scalar[int64](t, db, `SELECT count(*) FROM (
		SELECT info_hash, lag(info_hash) OVER (PARTITION BY filename ORDER BY file_row_number) AS prev
		FROM read_parquet(`+Quote(StatePattern(dir))+`, hive_partitioning=true, `+HiveTypes+`, filename=true, file_row_number=true))
		WHERE prev >= info_hash`)
	check("rows not in info_hash order within their file", unsorted, 0)
}

// checkPerHash compares the state with expected per-hash aggregates
// computed by DuckDB from the inputs: expect is a query yielding
// (info_hash BLOB, first_ms BIGINT, last_ms BIGINT, n BIGINT).
func checkPerHash(t *testing.T, db *sql.DB, dir, expect string) {
	t.Helper()
	q := fmt.Sprintf(`WITH s AS (
		SELECT info_hash, epoch_ms(first_seen) AS first_ms, epoch_ms(last_seen) AS last_ms, seen_count AS n
		FROM %s), e AS (%s)
	SELECT hex(coalesce(s.info_hash, e.info_hash)), s.first_ms, e.first_ms, s.last_ms, e.last_ms, s.n, e.n
	FROM s FULL OUTER JOIN e ON s.info_hash = e.info_hash
	WHERE s.info_hash IS NULL OR e.info_hash IS NULL
		OR s.first_ms <> e.first_ms OR s.last_ms <> e.last_ms OR s.n <> e.n
	ORDER BY 1 LIMIT 5`, StateGlob(dir), expect)
	_, rows, err := Rows(db, q)
	if err != nil {
		t.Fatalf("per-hash comparison: %v", err)
	}
	for _, r := range rows {
		t.Errorf("hash %s: state first/last/count %s/%s/%s, input %s/%s/%s",
			strings.ToLower(r[0]), r[1], r[3], r[5], r[2], r[4], r[6])
	}
}

// expectFrom is the per-hash aggregate of observation files as DuckDB
// reads them.
func expectFrom(files ...string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = Quote(f)
	}
	return `SELECT info_hash::BLOB AS info_hash, epoch_ms(min(observed_at)) AS first_ms,
		epoch_ms(max(observed_at)) AS last_ms, count(*) AS n
		FROM read_parquet([` + strings.Join(q, ", ") + `], union_by_name=true) GROUP BY 1`
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
