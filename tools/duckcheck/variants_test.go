package duckcheck

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/tools/obsgen"
)

// stateFingerprint is what dedup made of its inputs, per hash, as DuckDB
// reads the state: every column its observations decide but
// info_hash_v2_source (the source of the first row giving a v2 hash, in
// the input's row order) and activity's last bits (summed in row order).
func stateFingerprint(t *testing.T, data string) string {
	t.Helper()
	_, rows, err := Rows(duck(t), `SELECT lower(hex(info_hash)), hash_type, epoch_ms(first_seen), epoch_ms(last_seen),
		seen_count, last_source, first_source, round(activity, 9), lower(hex(info_hash_v2))
		FROM `+StateGlob(data)+` ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&b, strings.Join(r, ","))
	}
	return b.String()
}

// TestDedupReadsDuckDBVariants: observations DuckDB rewrote in each way a
// user's COPY may (codecs, format V2 with its DELTA encodings, small row
// groups, columns reordered or added, a hex info_hash, every TIMESTAMP
// unit, wider hash_type integers, an ENUM source, dictionary-encoded
// strings, LZ4_RAW, which rowio decompresses for parquet-go) give the
// state the project's own file of the same rows gives; what dedup cannot
// read is one line naming the file, exit 2: a Hive-partitioned folder
// whose files lack their partition columns (they were read without them:
// every source an import).
func TestDedupReadsDuckDBVariants(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	in, _ := generate(t, dir, "obs.parquet", config(20_000, nil), obsgen.Native)
	ref := filepath.Join(dir, "ref")
	mustInfohash(t, "dedup", "--data", ref, in)
	want := stateFingerprint(t, ref)
	cols := "info_hash, info_hash_v2, hash_type, observed_at, source, node_addr, node_id, peer_port, run_id"
	with := func(repl string) string {
		return "SELECT * REPLACE (" + repl + ") FROM read_parquet(" + Quote(in) + ")"
	}
	plain := "SELECT " + cols + " FROM read_parquet(" + Quote(in) + ")"
	tests := []struct {
		name, query, opts string
		setup             string
		folder            bool   // PARTITION_BY: the input is the folder
		err               string // exit 2 with this, naming the file
	}{
		{name: "snappy", query: plain, opts: "COMPRESSION snappy"},
		{name: "gzip V2", query: plain, opts: "COMPRESSION gzip, PARQUET_VERSION V2"},
		{name: "zstd V2, small row groups", query: plain, opts: "COMPRESSION zstd, PARQUET_VERSION V2, ROW_GROUP_SIZE 2048"},
		{name: "brotli", query: plain, opts: "COMPRESSION brotli"},
		{name: "uncompressed, no dictionaries", query: plain,
			opts: "COMPRESSION uncompressed, DICTIONARY_COMPRESSION_RATIO_THRESHOLD 0"},
		{name: "lz4", query: plain, opts: "COMPRESSION lz4"},
		{name: "lz4 V2", query: plain, opts: "COMPRESSION lz4, PARQUET_VERSION V2"},
		{name: "columns reversed, extra columns", query: "SELECT [1, 2] AS l, run_id, peer_port, node_id, node_addr, source, " +
			"observed_at, hash_type, info_hash_v2, info_hash, {'x': 1} AS s FROM read_parquet(" + Quote(in) + ")"},
		{name: "hex info_hash, dictionary-encoded", query: with("hex(info_hash) AS info_hash, lower(hex(info_hash_v2)) AS info_hash_v2"),
			opts: "DICTIONARY_COMPRESSION_RATIO_THRESHOLD -1"},
		{name: "TIMESTAMP", query: with("observed_at::TIMESTAMP AS observed_at")},
		{name: "TIMESTAMP_MS V2", query: with("observed_at::TIMESTAMP_MS AS observed_at"), opts: "PARQUET_VERSION V2"},
		{name: "TIMESTAMP_NS", query: with("observed_at::TIMESTAMP_NS AS observed_at")},
		{name: "TIMESTAMPTZ written in Berlin", query: with("observed_at::TIMESTAMPTZ AS observed_at"),
			setup: "SET TimeZone = 'Europe/Berlin';"},
		{name: "epoch ms BIGINT", query: with("epoch_ms(observed_at) AS observed_at")},
		{name: "hash_type SMALLINT", query: with("hash_type::SMALLINT AS hash_type")},
		{name: "hash_type BIGINT", query: with("hash_type::BIGINT AS hash_type")},
		{name: "source ENUM", query: with("source::src AS source"),
			setup: "CREATE TYPE src AS ENUM ('dht_get_peers', 'dht_announce_peer', 'dht_sample_infohashes', 'import');"},
		{name: "PARTITION_BY source, hash_type", query: plain, opts: "PARTITION_BY (source, hash_type)", folder: true,
			err: "(Hive partitioning), which dedup does not read"},
		{name: "PARTITION_BY, WRITE_PARTITION_COLUMNS", query: plain,
			opts: "PARTITION_BY (source, hash_type), WRITE_PARTITION_COLUMNS true", folder: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("v%d", i))
			if !tt.folder {
				out += ".parquet"
			}
			db := duck(t)
			q := tt.setup + "COPY (" + tt.query + ") TO " + Quote(out) + " (FORMAT parquet"
			if tt.opts != "" {
				q += ", " + tt.opts
			}
			if _, err := db.Exec(q + ")"); err != nil {
				t.Fatalf("DuckDB: %v", err)
			}
			data := filepath.Join(dir, fmt.Sprintf("data%d", i))
			_, stderr, code := infohash(t, "dedup", "--data", data, out)
			if tt.err != "" {
				if code != 2 || !strings.Contains(stderr, tt.err) || !strings.Contains(stderr, out) {
					t.Fatalf("exit %d, stderr %q; want exit 2 naming %s with %q", code, stderr, out, tt.err)
				}
				return
			}
			if code != 0 {
				t.Fatalf("dedup: exit %d: %s", code, stderr)
			}
			if got := stateFingerprint(t, data); got != want {
				t.Fatalf("state differs from the original file's:\n%.800s\nwant:\n%.800s", got, want)
			}
		})
	}
}
