package duckcheck

import (
	"bytes"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anacrolix/torrent/bencode"
	"github.com/anacrolix/torrent/metainfo"
)

// torrentsGlob is the documented read path of the fetched metadata.
func torrentsGlob(dir string) string {
	return HiveRead(filepath.Join(dir, "torrents", "current", "prefix=*", "*.parquet"))
}

func sha1Sum(b []byte) [20]byte { return sha1.Sum(b) }

var tsTypes = []string{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"}

// stateTypes and torrentTypes are the DuckDB types of the tables' columns
// (formats/schema State and Torrent).
var (
	stateTypes = map[string][]string{
		"info_hash": {"BLOB"}, "info_hash_v2": {"BLOB"}, "hash_type": {"TINYINT"},
		"first_seen": tsTypes, "last_seen": tsTypes, "seen_count": {"BIGINT"},
		"last_source": {"VARCHAR"}, "activity": {"DOUBLE"}, "metadata_status": {"VARCHAR"},
		"attempts": {"INTEGER"}, "last_attempt": tsTypes, "last_failure": {"VARCHAR"},
		"next_retry": tsTypes, "lease_id": {"VARCHAR"}, "lease_until": tsTypes, "tier": {"VARCHAR"},
		"backoff_step": {"INTEGER"}, "bad_metadata": {"INTEGER"}, "reactivated_at": tsTypes,
		"avoid_peers": {"VARCHAR[]"}, "peers": {"VARCHAR[]"}, "first_source": {"VARCHAR"},
		"last_failure_at": tsTypes, "peers_at": tsTypes, "info_hash_v2_source": {"VARCHAR"},
	}
	torrentTypes = map[string][]string{
		"info_hash": {"BLOB"}, "hash_type": {"TINYINT"}, "fetched_at": tsTypes,
		"served_by": {"VARCHAR"}, "metadata_size": {"BIGINT"}, "name": {"VARCHAR"},
		"name_raw": {"BLOB"}, "name_utf8_valid": {"BOOLEAN"}, "total_size": {"BIGINT"},
		"piece_length": {"BIGINT"}, "file_count": {"INTEGER"},
		"files":   {"STRUCT(path VARCHAR, path_raw BLOB, length BIGINT)[]"},
		"private": {"BOOLEAN"}, "info_bytes": {"BLOB"},
	}
)

// describe returns the column names (in order) and DuckDB types of a
// relation.
func describe(t *testing.T, db *sql.DB, rel string) ([]string, map[string]string) {
	t.Helper()
	_, rows, err := Rows(db, "DESCRIBE SELECT * FROM "+rel)
	if err != nil {
		t.Fatalf("DuckDB cannot read %s: %v", rel, err)
	}
	var cols []string
	types := map[string]string{}
	for _, r := range rows {
		cols = append(cols, r[0])
		types[r[0]] = r[1]
	}
	return cols, types
}

// checkTypes compares a table's DuckDB column types with want. Extra
// columns are allowed (columns may be added) and logged.
func checkTypes(t *testing.T, db *sql.DB, table, rel string, want map[string][]string) {
	t.Helper()
	_, got := describe(t, db, rel)
	for col, ok := range want {
		if typ, present := got[col]; !present {
			t.Errorf("%s: no column %s", table, col)
		} else if !slices.Contains(ok, typ) {
			t.Errorf("%s: column %s is %s, want %s", table, col, typ, strings.Join(ok, " or "))
		}
	}
	for col, typ := range got {
		if _, known := want[col]; !known && col != "prefix" {
			t.Logf("%s: column %s %s is not checked", table, col, typ)
		}
	}
}

// checkTables loads the state and torrents tables through the documented
// globs and compares them with the testnet's ground truth.
func checkTables(t *testing.T, db *sql.DB, c *crawl) {
	state, torrents := StateGlob(c.data), torrentsGlob(c.data)
	checkTypes(t, db, "state", state, stateTypes)
	checkTypes(t, db, "torrents", torrents, torrentTypes)
	for name, rel := range map[string]string{"state": state, "torrents": torrents} {
		var n, distinct, badLen, badPrefix int64
		err := db.QueryRow(`SELECT count(*), count(DISTINCT info_hash),
			count(*) FILTER (octet_length(info_hash) <> 20),
			count(*) FILTER (prefix::VARCHAR <> lower(substr(hex(info_hash), 1, 2)))
			FROM `+rel).Scan(&n, &distinct, &badLen, &badPrefix)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n != distinct || badLen != 0 || badPrefix != 0 {
			t.Errorf("%s: %d rows, %d distinct hashes (want one row per hash), %d hashes not 20 bytes, %d rows in the wrong prefix= partition",
				name, n, distinct, badLen, badPrefix)
		}
	}

	// The state holds exactly the hashes capture observed, with their counts.
	obs := "read_parquet(" + Quote(c.obs) + ")"
	if d := scalar[int64](t, db, `SELECT count(*) FROM (SELECT DISTINCT info_hash::BLOB AS h FROM `+obs+`) o
		FULL OUTER JOIN (SELECT info_hash AS h FROM `+state+`) s USING (h) WHERE o.h IS NULL OR s.h IS NULL`); d != 0 {
		t.Errorf("%d hashes are in the observations or the state but not both", d)
	}
	checkPerHash(t, db, c.data, expectFrom(c.obs))

	seen := checkStateRows(t, db, c)
	var missing []string
	searched := 0
	for h, outcome := range c.want {
		switch {
		case c.stored[h] && !seen[h]:
			missing = append(missing, h+" ("+outcome+")")
		case !c.stored[h] && seen[h]:
			searched++
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("capture's sample_infohashes walk missed %d of the %d hashes the testnet stores: %s",
			len(missing), len(c.stored), strings.Join(missing, ", "))
	}
	t.Logf("state: %d hashes (%s), %d of them searched-only", len(seen), hashKinds(c.want, seen), searched)
	checkTorrentRows(t, db, c, seen)
}

// checkStateRows checks every state row against the ground truth and
// returns the hashes present.
func checkStateRows(t *testing.T, db *sql.DB, c *crawl) map[string]bool {
	t.Helper()
	rs, err := db.Query(`SELECT lower(hex(info_hash)), hash_type, metadata_status, last_failure, attempts,
		last_attempt, first_seen, last_seen, next_retry FROM ` + StateGlob(c.data))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	seen := map[string]bool{}
	for rs.Next() {
		var h, status string
		var typ int8
		var failure sql.NullString
		var attempts int32
		var attempted, next sql.NullTime
		var first, last time.Time
		if err := rs.Scan(&h, &typ, &status, &failure, &attempts, &attempted, &first, &last, &next); err != nil {
			t.Fatal(err)
		}
		seen[h] = true
		want, known := c.want[h]
		if !known {
			t.Errorf("state has %s, which the testnet never had", h)
			continue
		}
		if want == "ok" {
			if status != "fetched" || failure.Valid {
				t.Errorf("%s (fetchable): metadata_status %q, last_failure %q; want fetched and null", h, status, failure.String)
			}
		} else {
			if status != "failed" || failure.String != want {
				t.Errorf("%s: metadata_status %q, last_failure %q; want failed, %s", h, status, failure.String, want)
			}
			if !next.Valid || !next.Time.After(attempted.Time) {
				t.Errorf("%s failed (%s) but next_retry is %v, not after last_attempt %v", h, want, next, attempted.Time)
			}
		}
		if typ != 1 || attempts != 1 || !attempted.Valid {
			t.Errorf("%s: hash_type %d, attempts %d, last_attempt %v; want 1, 1, set", h, typ, attempts, attempted)
		}
		for what, ts := range map[string]time.Time{"first_seen": first, "last_seen": last, "last_attempt": attempted.Time} {
			if ts.Before(c.start) || ts.After(c.end) {
				t.Errorf("%s: %s %v is outside the run (%v .. %v)", h, what, ts, c.start, c.end)
			}
		}
		if last.Before(first) || attempted.Time.Before(last) {
			t.Errorf("%s: first_seen %v, last_seen %v, last_attempt %v are out of order", h, first, last, attempted.Time)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return seen
}

// wantMeta is a torrent's metadata as the ground truth's info dictionary
// says, decoded with anacrolix/torrent (not with fetch's parser).
type wantMeta struct {
	name, raw   string
	total, plen int64
	files       []string // "path|path_raw hex|length"
}

func metaOf(t *testing.T, info []byte) wantMeta {
	t.Helper()
	var mi metainfo.Info
	if err := bencode.Unmarshal(info, &mi); err != nil {
		t.Fatalf("ground truth info dictionary: %v", err)
	}
	m := wantMeta{name: strings.ToValidUTF8(mi.Name, "\uFFFD"), raw: mi.Name, total: mi.TotalLength(), plen: mi.PieceLength}
	file := func(raw string, n int64) string {
		return fmt.Sprintf("%s|%x|%d", strings.ToValidUTF8(raw, "\uFFFD"), raw, n)
	}
	if len(mi.Files) == 0 {
		m.files = []string{file(mi.Name, mi.Length)}
	}
	for _, f := range mi.Files {
		m.files = append(m.files, file(strings.Join(f.Path, "/"), f.Length))
	}
	return m
}

// checkTorrentRows checks that every fetchable hash capture saw has
// exactly its torrent's metadata, and nothing else is there.
func checkTorrentRows(t *testing.T, db *sql.DB, c *crawl, seen map[string]bool) {
	t.Helper()
	rs, err := db.Query(`SELECT lower(hex(info_hash)), hash_type, fetched_at, served_by, metadata_size,
		name, name_raw, name_utf8_valid, total_size, piece_length, file_count, files, private, info_bytes
		FROM ` + torrentsGlob(c.data))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := map[string]bool{}
	valid := map[bool]int{}
	for rs.Next() {
		var h, name, servedBy string
		var typ int8
		var fetchedAt time.Time
		var size, total, plen int64
		var nfiles int32
		var rawName, info []byte
		var utf8OK, private bool
		var files any
		if err := rs.Scan(&h, &typ, &fetchedAt, &servedBy, &size, &name, &rawName, &utf8OK, &total, &plen,
			&nfiles, &files, &private, &info); err != nil {
			t.Fatal(err)
		}
		got[h] = true
		truth, ok := c.infos[h]
		if !ok {
			t.Errorf("torrents has %s, whose ground truth is %q", h, c.want[h])
			continue
		}
		if sum := sha1.Sum(info); hex.EncodeToString(sum[:]) != h {
			t.Errorf("%s: SHA-1 of info_bytes is %x", h, sum)
		}
		if !bytes.Equal(info, truth) || size != int64(len(truth)) {
			t.Errorf("%s: info_bytes (%d bytes, metadata_size %d) differ from the torrent's %d bytes", h, len(info), size, len(truth))
		}
		w := metaOf(t, truth)
		valid[utf8OK]++
		if name != w.name || string(rawName) != w.raw || utf8OK != utf8.ValidString(w.raw) {
			t.Errorf("%s: name %q, name_raw %q, name_utf8_valid %v; want %q, %q, %v",
				h, name, rawName, utf8OK, w.name, w.raw, utf8.ValidString(w.raw))
		}
		if total != w.total || plen != w.plen || int(nfiles) != len(w.files) || private || typ != 1 {
			t.Errorf("%s: total_size %d, piece_length %d, file_count %d, private %v, hash_type %d; want %d, %d, %d, false, 1",
				h, total, plen, nfiles, private, typ, w.total, w.plen, len(w.files))
		}
		if gf := fileList(files); !slices.Equal(gf, w.files) {
			t.Errorf("%s: files %q, want %q", h, gf, w.files)
		}
		if !slices.Contains(c.peers[h], servedBy) {
			t.Errorf("%s: served_by %q, want one of %v", h, servedBy, c.peers[h])
		}
		if fetchedAt.Before(c.start) || fetchedAt.After(c.end) {
			t.Errorf("%s: fetched_at %v is outside the run (%v .. %v)", h, fetchedAt, c.start, c.end)
		}
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	for h := range c.infos {
		if seen[h] && !got[h] {
			t.Errorf("%s was fetchable and seen but has no torrents row", h)
		}
	}
	if valid[false] == 0 || valid[true] == 0 {
		t.Errorf("name_utf8_valid: %d true, %d false; the ground truth has both", valid[true], valid[false])
	}
	t.Logf("torrents: %d rows", len(got))
}

// fileList renders DuckDB's files column (a list of structs) as
// "path|path_raw hex|length" strings.
func fileList(v any) []string {
	l, _ := v.([]any)
	out := []string{}
	for _, e := range l {
		m, _ := e.(map[string]any)
		raw, _ := m["path_raw"].([]byte)
		out = append(out, fmt.Sprintf("%v|%x|%v", m["path"], raw, m["length"]))
	}
	return out
}

// TestLedgerReadByDuckDB: DuckDB reads the whole ledger of applied inputs
// at ledger/current, one row per input with its content checksum and row
// count, whatever the commits that applied them.
func TestLedgerReadByDuckDB(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	var args []string
	const inputs = 300
	for i := range inputs {
		p := filepath.Join(dir, fmt.Sprintf("list-%03d.txt", i))
		var b strings.Builder
		for j := 0; j <= i%3; j++ {
			fmt.Fprintf(&b, "%040x\n", i*10+j+1)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	data := filepath.Join(dir, "data")
	mustInfohash(t, append([]string{"dedup", "--data", data}, args[:290]...)...)
	for _, a := range args[290:] {
		mustInfohash(t, "dedup", "--data", data, a)
	}
	rel := "read_parquet(" + Quote(filepath.Join(data, "ledger", "current", "*.parquet")) + ")"
	_, rows, err := Rows(duck(t), `SELECT count(*), count(DISTINCT id), sum(rows), min(length(id)),
		count(*) FILTER (WHERE name LIKE '%list-%.txt') FROM `+rel)
	if err != nil {
		t.Fatalf("DuckDB cannot read the ledger: %v", err)
	}
	// 300 inputs of 1, 2 or 3 lines: 100 of each.
	// An id is dedup's content checksum, xxh3-128 in hex.
	want := []string{"300", "300", "600", "32", "300"}
	if !slices.Equal(rows[0], want) {
		t.Fatalf("ledger as DuckDB reads it: %v, want %v", rows[0], want)
	}
}
