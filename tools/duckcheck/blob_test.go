package duckcheck

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestDuckDBReadsLargeInfoBytes: a results file whose info_bytes carry no
// min/max (chunk statistics, page headers, page index) and whose row
// groups end by bytes reads in DuckDB with every info dictionary intact,
// and filters on info_bytes find them (nothing skips a row group or page
// on the missing bounds).
func TestDuckDBReadsLargeInfoBytes(t *testing.T) {
	sizes := []int{5 << 20, 30 << 10, 1 << 20, 0, 300 << 10}
	rows := make([]schema.Result, len(sizes))
	total := 0
	for i, size := range sizes {
		rows[i] = schema.Result{InfoHash: schema.Hash{byte(i)}, HashType: schema.HashV1, Outcome: schema.OutcomeNoPeers}
		if size > 0 {
			info := make([]byte, size)
			rand.NewChaCha8([32]byte{byte(i)}).Read(info)
			info[0] = 'd'
			rows[i].Outcome, rows[i].InfoBytes = schema.OutcomeOK, info
			total += size
		}
	}
	path := filepath.Join(t.TempDir(), "results.parquet")
	w, err := rowio.Create[schema.Result](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db := duck(t)
	src := "read_parquet(" + Quote(path) + ")"
	if got := scalar[int64](t, db, "SELECT count(*) FROM parquet_metadata("+Quote(path)+
		") WHERE path_in_schema = 'info_bytes' AND coalesce(stats_min, stats_max, stats_min_value, stats_max_value) IS NOT NULL"); got != 0 {
		t.Errorf("DuckDB sees min/max statistics on %d info_bytes chunks", got)
	}
	if got := scalar[int64](t, db, "SELECT sum(octet_length(info_bytes)) FROM "+src); got != int64(total) {
		t.Errorf("DuckDB reads %d bytes of info_bytes, want %d", got, total)
	}
	if got := scalar[int64](t, db, "SELECT count(*) FROM "+src+" WHERE info_bytes IS NULL"); got != 1 {
		t.Errorf("DuckDB reads %d null info_bytes, want 1", got)
	}
	for i := range rows {
		if rows[i].InfoBytes == nil {
			continue
		}
		var n int64
		var h []byte
		if err := db.QueryRow("SELECT count(*), any_value(info_hash) FROM "+src+" WHERE info_bytes = ?", rows[i].InfoBytes).Scan(&n, &h); err != nil {
			t.Fatal(err)
		}
		if n != 1 || string(h) != string(rows[i].InfoHash[:]) {
			t.Errorf("row %d: info_bytes = its own value matched %d rows (hash %x)", i, n, h)
		}
	}
	if got := scalar[int64](t, db, "SELECT count(*) FROM "+src+" WHERE info_bytes > 'c'::BLOB"); got != 4 {
		t.Errorf("info_bytes > 'c' matched %d rows, want 4", got)
	}
}
