package duckcheck

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
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

// timingCols are the timing columns of fetch's results, by stage.
var timingCols = []string{"lookup_ms", "connect_ms", "handshake_ms", "extension_ms", "metadata_ms", "verify_ms", "total_ms"}

// nullCols is "c IS NULL" for each of cols.
func nullCols(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c + " IS NULL"
	}
	return out
}

// TestResultTimingsNullReadByDuckDB: in fetch's results, read by DuckDB,
// the timings are BIGINT columns whose stages that did not run are NULL,
// not 0: without a DHT (--no-dht) lookup_ms is NULL in every row, and a
// hash the peer lacks has no connect_ms, handshake_ms, extension_ms,
// metadata_ms nor verify_ms, so that avg(connect_ms) is the served hash's
// alone. An ok row has the others. A peer that fails a later stage leaves
// the stages it got through timed and the rest NULL: no_extension has no
// extension_ms, no_ut_metadata and hash_mismatch (metadata that does not
// match: verify_ms is for matched bytes) no verify_ms. In every file
// DuckDB's count() and sum() of each timing match what a Go reader of the
// file gets, and the parts stay within their wholes (handshake_ms, set
// exactly when connect_ms is, within it; extension_ms and verify_ms within
// metadata_ms).
func TestResultTimingsNullReadByDuckDB(t *testing.T) {
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"served": info(map[string]any{"name": "timed", "length": 5, "piece length": 16384, "pieces": strings.Repeat("p", 20)}),
	})
	db := duck(t)
	results := filepath.Join(f.work, "results.parquet")
	rel := "read_parquet(" + Quote(results) + ")"
	cols := map[string][]string{}
	for _, c := range timingCols {
		cols[c] = []string{"BIGINT"}
	}
	checkTypes(t, db, "results", rel, cols)
	got := cellsOf(t, db, f, rel, "lower(hex(info_hash))", append([]string{"outcome"}, nullCols(timingCols)...))
	checkCells(t, got, map[string]string{
		"served":  "ok true false false false false false false",
		"missing": "peer_lacks_torrent true true true true true true false",
	}, "outcome, "+strings.Join(nullCols(timingCols), ", "))
	for _, c := range timingCols[1:6] {
		if same := scalar[bool](t, db, "SELECT avg("+c+") = max("+c+") AND count("+c+") = 1 FROM "+rel); !same {
			t.Errorf("avg(%s) counts rows where the stage did not run", c)
		}
	}
	checkTimingSums(t, db, results)

	// A peer of each behaviour that fails after the BEP 3 handshake.
	hashes := filepath.Join(f.work, "served.txt")
	if err := os.WriteFile(hashes, []byte(f.hashes["served"]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		b    badpeers.Behaviour
		want string // outcome, then each timing IS NULL
	}{
		{badpeers.NoExtension, "no_extension true false false true true true false"},
		{badpeers.NoUTMetadata, "no_ut_metadata true false false false true true false"},
		{badpeers.WrongTorrent, "hash_mismatch true false false false true true false"},
	} {
		t.Run(string(tt.b), func(t *testing.T) {
			p, err := badpeers.Start(tt.b, badpeers.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			out := filepath.Join(f.work, string(tt.b)+".parquet")
			mustInfohash(t, "fetch", "--no-dht", "--peer", p.Addr(), "--timeout", "20s", "--peer-timeout", "5s", "-o", out, hashes)
			rel := "read_parquet(" + Quote(out) + ")"
			checkTypes(t, db, "results", rel, cols)
			got := cellsOf(t, db, f, rel, "lower(hex(info_hash))", append([]string{"outcome"}, nullCols(timingCols)...))
			checkCells(t, got, map[string]string{"served": tt.want}, "outcome, "+strings.Join(nullCols(timingCols), ", "))
			checkTimingSums(t, db, out)
		})
	}
}

// checkTimingSums compares DuckDB's count() and sum() of each timing
// column of the results file path with what a Go reader of it gets, and
// checks that no part outgrows its whole.
func checkTimingSums(t *testing.T, db *sql.DB, path string) {
	t.Helper()
	rows, err := dataset.ReadFile[schema.Result](path)
	if err != nil {
		t.Fatal(err)
	}
	var sel []string
	for _, c := range timingCols {
		sel = append(sel, "count("+c+")::VARCHAR || ' ' || coalesce(sum("+c+"), 0)::VARCHAR")
	}
	_, got, err := Rows(db, "SELECT "+strings.Join(sel, ", ")+" FROM read_parquet("+Quote(path)+")")
	if err != nil || len(got) != 1 {
		t.Fatalf("%s: %d rows, %v", path, len(got), err)
	}
	for i, c := range timingCols {
		var n, sum int64
		for _, r := range rows {
			if v := timing(&r, c); v != nil {
				n, sum = n+1, sum+*v
			}
		}
		if want := fmt.Sprintf("%d %d", n, sum); got[0][i] != want {
			t.Errorf("%s: DuckDB's count and sum of %s are %s, written %s", path, c, got[0][i], want)
		}
	}
	if bad := scalar[int64](t, db, `SELECT count(*) FILTER ((handshake_ms IS NULL) <> (connect_ms IS NULL)
		OR handshake_ms > connect_ms OR extension_ms > metadata_ms OR verify_ms > metadata_ms
		OR extension_ms + verify_ms > metadata_ms) FROM read_parquet(`+Quote(path)+")"); bad != 0 {
		t.Errorf("%s: %d rows whose handshake_ms is not within connect_ms, or extension_ms and verify_ms not within metadata_ms", path, bad)
	}
}

// timing is r's timing column c.
func timing(r *schema.Result, c string) *int64 {
	return map[string]*int64{"lookup_ms": r.LookupMs, "connect_ms": r.ConnectMs, "handshake_ms": r.HandshakeMs,
		"extension_ms": r.ExtensionMs, "metadata_ms": r.MetadataMs, "verify_ms": r.VerifyMs, "total_ms": r.TotalMs}[c]
}
