package duckcheck

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/tools/badpeers"
)

// TestResultsMetadataNullReadByDuckDB: in fetch's results, Parquet (read
// by DuckDB) and Arrow, a failed result's metadata columns are all NULL:
// files (it was [], which DuckDB cannot tell from a torrent without
// files), name_utf8_valid and private (they were false) as much as name
// and the sizes. An ok result holds its values, [] for a torrent without
// files (v1 or v2) and false flags included.
func TestResultsMetadataNullReadByDuckDB(t *testing.T) {
	v2Info := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "v2 none", "piece length": 16384, "file tree": map[string]any{}})
	sum := sha256.Sum256(v2Info)
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"no files":    info(map[string]any{"name": "none", "files": []any{}, "piece length": 16384, "pieces": ""}),
		"v2 no files": {InfoHash: [20]byte(sum[:20]), Info: v2Info},
		"named": info(map[string]any{"name": "named", "length": 5, "piece length": 16384,
			"pieces": strings.Repeat("p", 20)}),
	})
	t.Run("parquet", func(t *testing.T) {
		rel := "read_parquet(" + Quote(filepath.Join(f.work, "results.parquet")) + ")"
		got := cellsOf(t, duck(t), f, rel, "lower(hex(info_hash))", []string{"outcome = 'ok'", "files IS NULL", "len(files)",
			"name_utf8_valid", "private", "name", "total_size", "file_count", "info_bytes IS NULL"})
		want := map[string]string{
			"no files":    "true false 0 true false none 0 0 false",
			"v2 no files": "true false 0 true false v2 none 0 0 false",
			"named":       "true false 1 true false named 5 1 false",
			"missing":     "false true NULL NULL NULL NULL NULL NULL true",
		}
		checkCells(t, got, want, "outcome = 'ok', files IS NULL, len(files), name_utf8_valid, private, name, total_size, file_count, info_bytes IS NULL")
	})
	t.Run("arrow", func(t *testing.T) {
		stream := filepath.Join(f.work, "results.arrow")
		out := mustInfohash(t, "fetch", "--no-dht", "--peer", f.peer, "--timeout", "20s", "--peer-timeout", "5s", "-o", "-",
			filepath.Join(f.work, "hashes.txt"))
		if err := os.WriteFile(stream, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		got := arrowCells(t, f, stream, []string{"files", "name_utf8_valid", "private", "name", "total_size", "file_count"})
		want := map[string]string{
			"no files":    "[0] true false none 0 0",
			"v2 no files": "[0] true false v2 none 0 0",
			"named":       "[1] true false named 5 1",
			"missing":     "NULL NULL NULL NULL NULL NULL",
		}
		checkCells(t, got, want, "files, name_utf8_valid, private, name, total_size, file_count")
	})
}

// checkCells compares rows by label.
func checkCells(t *testing.T, got, want map[string]string, cols string) {
	t.Helper()
	for l, w := range want {
		if got[l] != w {
			t.Errorf("%s: %s = %q, want %q", l, cols, got[l], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d rows (%v), want %d", len(got), got, len(want))
	}
}

// TestResultTimingsNullReadByDuckDB: in fetch's results, read by DuckDB,
// the timings are BIGINT columns whose stages that did not run are NULL,
// not 0: without a DHT (--no-dht) lookup_ms is NULL in every row, and a
// hash the peer lacks has no connect_ms nor metadata_ms, so that
// avg(connect_ms) is the served hash's alone. An ok row has the others.
func TestResultTimingsNullReadByDuckDB(t *testing.T) {
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"served": info(map[string]any{"name": "timed", "length": 5, "piece length": 16384, "pieces": strings.Repeat("p", 20)}),
	})
	db := duck(t)
	rel := "read_parquet(" + Quote(filepath.Join(f.work, "results.parquet")) + ")"
	cols := map[string][]string{}
	for _, c := range []string{"lookup_ms", "connect_ms", "metadata_ms", "total_ms"} {
		cols[c] = []string{"BIGINT"}
	}
	checkTypes(t, db, "results", rel, cols)
	got := cellsOf(t, db, f, rel, "lower(hex(info_hash))", []string{"outcome", "lookup_ms IS NULL", "connect_ms IS NULL",
		"metadata_ms IS NULL", "total_ms IS NULL"})
	checkCells(t, got, map[string]string{
		"served":  "ok true false false false",
		"missing": "peer_lacks_torrent true true true false",
	}, "outcome, lookup_ms IS NULL, connect_ms IS NULL, metadata_ms IS NULL, total_ms IS NULL")
	if same := scalar[bool](t, db, "SELECT avg(connect_ms) = max(connect_ms) AND count(connect_ms) = 1 FROM "+rel); !same {
		t.Errorf("avg(connect_ms) counts rows without a connection")
	}
}
