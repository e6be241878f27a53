package duckcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// Every STRING column infohash writes must hold UTF-8: DuckDB refuses a
// file with other bytes in one ("Invalid string encoding found in
// Parquet file"), and with it every query over the glob that reads the
// column, until the row changes.

// A source that DuckDB wrote as a BLOB is read: valid UTF-8 becomes
// last_source, which DuckDB reads back; other bytes are bad input (exit
// 2, one line naming the file and row) and commit nothing.
func TestDedupBlobSource(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	db := duck(t)
	write := func(name, source string) string {
		p := filepath.Join(dir, name)
		q := `COPY (SELECT unhex(sha1('blobsrc' || i)) AS info_hash, TIMESTAMPTZ '2026-01-01 00:00:00+00' AS observed_at,
			(CASE WHEN i = 3 THEN ` + source + ` ELSE 'dht_get_peers' END)::BLOB AS "source"
			FROM range(5) t(i)) TO ` + Quote(p) + ` (FORMAT parquet)`
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("DuckDB COPY: %v", err)
		}
		return p
	}
	data := filepath.Join(dir, "data")
	good := write("good.parquet", `'x-custom'`)
	mustInfohash(t, "dedup", "--data", data, "--now", "2026-01-02T00:00:00Z", good)
	got := scalar[string](t, db, "SELECT string_agg(DISTINCT last_source, ',' ORDER BY last_source) FROM "+StateGlob(data))
	if got != "dht_get_peers,x-custom" {
		t.Fatalf("last_source %q", got)
	}

	bad := write("bad.parquet", `'\xFFsrc'`)
	_, stderr, code := infohash(t, "dedup", "--data", data, "--now", "2026-01-02T00:00:00Z", bad)
	want := "dedup: " + bad + `: row 3: source "\xffsrc" is not valid UTF-8`
	if code != 2 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, want 2 and %q; stderr: %s", code, want, stderr)
	}
	if n := scalar[int64](t, db, "SELECT count(*) FROM "+StateGlob(data)+" WHERE last_source IS NOT NULL"); n != 5 {
		t.Fatalf("the state has %d rows, want the 5 of the good input", n)
	}
}

// Inputs whose file names are not UTF-8 (a file name may hold any bytes)
// are recorded in the ledger with those bytes escaped: DuckDB reads the
// ledger table and the CSV export of it, which held the raw bytes.
func TestLedgerNamesReadByDuckDB(t *testing.T) {
	need(t, "dedup")
	need(t, "export")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	list := filepath.Join(dir, "bad\xffname,\"x\".txt")
	if err := os.WriteFile(list, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, list)
	res := filepath.Join(dir, "res\xfe.parquet")
	w, err := rowio.Create[schema.Result](res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Result{{InfoHash: schema.Hash{0x01, 0x23}, HashType: schema.HashV1,
		AttemptedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), Outcome: schema.OutcomeNoPeers}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "merge", "--data", data, res)

	want := filepath.Join(dir, `bad\xffname,"x".txt`) + "|" + filepath.Join(dir, `res\xfe.parquet`)
	db := duck(t)
	ledger := "read_parquet(" + Quote(filepath.Join(data, "ledger", "current", "*.parquet")) + ")"
	if got := scalar[string](t, db, "SELECT string_agg(name, '|' ORDER BY name) FROM "+ledger); got != want {
		t.Errorf("ledger names %q, want %q", got, want)
	}
	out := filepath.Join(dir, "ledger.csv")
	mustInfohash(t, "export", "--data", data, "--table", "ledger", "--format", "csv", "-o", out)
	csv := "read_csv(" + Quote(out) + ", header=true)"
	if got := scalar[string](t, db, "SELECT string_agg(name, '|' ORDER BY name) FROM "+csv); got != want {
		t.Errorf("CSV export's names %q, want %q", got, want)
	}
}
