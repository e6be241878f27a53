package duckcheck

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestMergeReadsDuckDBResultVariants: merge reads a results file DuckDB
// rewrote with the same meaning (another compression, a TIMESTAMP_NS
// attempted_at, PARTITION_BY with WRITE_PARTITION_COLUMNS), and refuses,
// exit 2 naming the file and the column, one whose values it would read
// as something else (a DATE or DECIMAL(9,2) attempt, a TIMESTAMP or
// INTERVAL lookup_ms) or whose Hive partitioning moved a column out of the
// files (PARTITION_BY (outcome), (detail)). merge accepted the DATE and
// DECIMAL attempts and the TIMESTAMP lookup_ms with their stored numbers,
// read a PARTITION_BY (detail) folder with every detail null, and said
// "not a results file" of a PARTITION_BY (outcome) one. An INTERVAL
// (DuckDB writes a FIXED_LEN_BYTE_ARRAY(12)) was refused already.
//
// An info_hash DuckDB writes as VARCHAR (a STRING column) is hex, one it
// writes as a BLOB the hash's bytes (textenc.HashValue, as dedup and fetch
// read them): merge took 20 characters of text as a hash's bytes, and 40
// bytes of a BLOB as hex.
func TestMergeReadsDuckDBResultVariants(t *testing.T) {
	need(t, "dedup")
	need(t, "merge")
	dir := t.TempDir()
	h := schema.Hash{0x5c, 19: 1}
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(hex.EncodeToString(h[:])+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "results.parquet")
	w, err := rowio.Create[schema.Result](in, nil)
	if err == nil {
		err = w.Write([]schema.Result{{InfoHash: h, HashType: schema.HashV1, Attempt: 1, Outcome: schema.OutcomeNoPeers,
			AttemptedAt: time.Now().Add(-time.Hour).UnixMilli(), Detail: "no peer answered", LookupMs: new(int64(250))}})
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	with := func(repl string) string {
		return "SELECT * REPLACE (" + repl + ") FROM read_parquet(" + Quote(in) + ")"
	}
	plain := "SELECT * FROM read_parquet(" + Quote(in) + ")"
	tests := []struct {
		name, query, opts string
		folder            bool   // PARTITION_BY: the input is the folder
		err               string // exit 2 with this, naming the file
	}{
		{name: "zstd V2", query: plain, opts: "COMPRESSION zstd, PARQUET_VERSION V2"},
		{name: "TIMESTAMP_NS attempted_at", query: with("attempted_at::TIMESTAMP_NS AS attempted_at")},
		{name: "DATE attempt", query: with("DATE '2022-01-01' + attempt::INTEGER AS attempt"),
			err: `wrong schema: column "attempt" is DATE, want an integer (INT32)`},
		{name: "DECIMAL(9,2) attempt", query: with("attempt::DECIMAL(9,2) AS attempt"),
			err: `wrong schema: column "attempt" is DECIMAL(9,2), want an integer (INT32)`},
		{name: "TIMESTAMP lookup_ms", query: with("epoch_ms(lookup_ms) AS lookup_ms"),
			err: `wrong schema: column "lookup_ms" is TIMESTAMP(`},
		{name: "INTERVAL lookup_ms", query: with("to_milliseconds(lookup_ms) AS lookup_ms"),
			err: `wrong schema: column "lookup_ms" is FIXED_LEN_BYTE_ARRAY, want INT64`},
		{name: "VARCHAR info_hash, lower(hex(...))", query: with("lower(hex(info_hash)) AS info_hash")},
		{name: "VARCHAR info_hash of 20 characters", query: with("'abcdefghij0123456789' AS info_hash"),
			err: `row 1: info_hash "abcdefghij0123456789" (a STRING column) is not a hex infohash (40 digits)`},
		{name: "BLOB info_hash of 40 hex digits", query: with("encode(lower(hex(info_hash))) AS info_hash"),
			err: "row 1: info_hash has 40 bytes, want 20"},
		{name: "PARTITION_BY outcome", query: plain, opts: "PARTITION_BY (outcome)", folder: true,
			err: `column "outcome" is not in the file but in the name of its folder "outcome=no_peers" (Hive partitioning), which merge does not read`},
		{name: "PARTITION_BY detail", query: plain, opts: "PARTITION_BY (detail)", folder: true,
			err: `column "detail" is not in the file but in the name of its folder`},
		{name: "PARTITION_BY, WRITE_PARTITION_COLUMNS", query: plain,
			opts: "PARTITION_BY (outcome, detail), WRITE_PARTITION_COLUMNS true", folder: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("r%d", i))
			if !tt.folder {
				out += ".parquet"
			}
			q := "COPY (" + tt.query + ") TO " + Quote(out) + " (FORMAT parquet"
			if tt.opts != "" {
				q += ", " + tt.opts
			}
			if _, err := duck(t).Exec(q + ")"); err != nil {
				t.Fatalf("DuckDB: %v", err)
			}
			data := filepath.Join(dir, fmt.Sprintf("data%d", i))
			mustInfohash(t, "dedup", "--data", data, list)
			_, stderr, code := infohash(t, "merge", "--data", data, out)
			if tt.err != "" {
				if code != 2 || !strings.Contains(stderr, tt.err) || !strings.Contains(stderr, out) {
					t.Fatalf("exit %d, stderr %q; want exit 2 naming %s with %q", code, stderr, out, tt.err)
				}
				return
			}
			if code != 0 {
				t.Fatalf("merge: exit %d: %s", code, stderr)
			}
			if got := scalar[int64](t, duck(t), "SELECT attempts FROM "+StateGlob(data)); got != 1 {
				t.Fatalf("attempts = %d after merging the result, want 1", got)
			}
		})
	}
}
