// Package duckcheck checks infohash's datasets and files with DuckDB, the
// way an analyst would read them. It lives in its own module so that the
// infohash binary never links DuckDB.
//
// StateGlob is the documented read path of the committed state:
//
//	SELECT * FROM read_parquet('DIR/state/current/prefix=*/*.parquet',
//		hive_partitioning=true, hive_types={'prefix': VARCHAR})
package duckcheck

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

// Open opens an in-memory DuckDB (or the database file path, if not "")
// limited to threads threads (0 = DuckDB's default) and memory (e.g.
// "2GB"; "" = DuckDB's default), with the session time zone UTC.
func Open(path string, threads int, memory string) (*sql.DB, error) {
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("duckdb: open %q: %w", path, err)
	}
	// Settings are per connection: one connection keeps them in force.
	db.SetMaxOpenConns(1)
	stmts := []string{"SET TimeZone = 'UTC'"}
	if threads > 0 {
		stmts = append(stmts, fmt.Sprintf("SET threads = %d", threads))
	}
	if memory != "" {
		stmts = append(stmts, fmt.Sprintf("SET memory_limit = %s", Quote(memory)))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			db.Close()
			return nil, fmt.Errorf("duckdb: %s: %w", s, err)
		}
	}
	return db, nil
}

// Quote renders s as a SQL string literal.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// StatePattern is the file pattern of dataset dir's committed state.
func StatePattern(dir string) string {
	return filepath.Join(dir, "state", "current", "prefix=*", "*.parquet")
}

// HiveTypes is the read_parquet option that pins the type of the prefix
// column of a partitioned table to VARCHAR. Without it DuckDB infers the
// type from the prefix= folders present: all numeric-looking (prefix=12
// alone) make it BIGINT, which reads 12 rather than '12' and fails
// prefix = 'ab' with a conversion error.
const HiveTypes = "hive_types={'prefix': VARCHAR}"

// HiveRead is the read_parquet call, as documented for analysts, of a
// pattern of prefix= folders.
func HiveRead(pattern string) string {
	return fmt.Sprintf("read_parquet(%s, hive_partitioning=true, %s)", Quote(pattern), HiveTypes)
}

// StateGlob is the read_parquet call that loads dataset dir's committed
// state, as documented for analysts.
func StateGlob(dir string) string { return HiveRead(StatePattern(dir)) }

// Format renders one scanned value for text output: BLOBs as lowercase
// hex, times as RFC 3339 in UTC, NULL as "NULL".
func Format(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		return fmt.Sprint(x)
	}
}

// Rows runs a query and returns its column names and its rows as
// formatted strings (see Format).
func Rows(db *sql.DB, query string, args ...any) ([]string, [][]string, error) {
	rs, err := db.Query(query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = Format(v)
		}
		out = append(out, row)
	}
	return cols, out, rs.Err()
}
