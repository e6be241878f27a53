package duckcheck

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/infodict"
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
	mustInfohash(t, "dedup", "--data", data, "--far-now", "--now", "2026-01-02T00:00:00Z", good)
	got := scalar[string](t, db, "SELECT string_agg(DISTINCT last_source, ',' ORDER BY last_source) FROM "+StateGlob(data))
	if got != "dht_get_peers,x-custom" {
		t.Fatalf("last_source %q", got)
	}

	bad := write("bad.parquet", `'\xFFsrc'`)
	_, stderr, code := infohash(t, "dedup", "--data", data, "--far-now", "--now", "2026-01-02T00:00:00Z", bad)
	want := "dedup: " + bad + `: row 4: source "\xffsrc" is not valid UTF-8`
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

// A results file rewritten with DuckDB to forge an ok row's metadata
// columns (a name, a size, the private flag beside the real file list)
// stores what its verified info_bytes say: merge derives every metadata
// column from them, and warns that the row disagreed.
func TestMergeDerivesMetadataFromInfoBytes(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	info := []byte("d5:filesld6:lengthi10e4:pathl1:aeed6:lengthi20e4:pathl1:beee4:name4:real12:piece lengthi16384e6:pieces20:" +
		strings.Repeat("p", 20) + "e")
	real, err := infodict.Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	h := sha1Sum(info)
	orig := filepath.Join(dir, "r.parquet")
	w, err := rowio.Create[schema.Result](orig, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schema.Result{{InfoHash: h, HashType: schema.HashV1, Outcome: schema.OutcomeOK,
		AttemptedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), ServedBy: "127.0.0.1:6881",
		MetadataSize: int64(len(info)), PeerFailures: []schema.PeerFailure{}, ResultMeta: schema.OKMeta(real)}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(dir, "forged.parquet")
	db := duck(t)
	if _, err := db.Exec(`COPY (SELECT * REPLACE ('forged name' AS name, 999::BIGINT AS total_size, true AS private)
		FROM read_parquet(` + Quote(orig) + `)) TO ` + Quote(forged) + ` (FORMAT parquet)`); err != nil {
		t.Fatalf("DuckDB COPY: %v", err)
	}
	data := filepath.Join(dir, "data")
	list := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(list, []byte(hex.EncodeToString(h[:])+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", data, list)
	_, stderr, code := infohash(t, "merge", "--data", data, forged)
	if code != 0 {
		t.Fatalf("exit %d; stderr: %s", code, stderr)
	}
	_, rows, err := Rows(db, "SELECT name, total_size, private, file_count, len(files) FROM "+torrentsGlob(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"real", "30", "false", "2", "2"}}; fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("torrents: %v, want %v", rows, want)
	}
	if !strings.Contains(stderr, "disagree with their info_bytes") {
		t.Errorf("no warning that the row disagreed; stderr: %s", stderr)
	}
}
