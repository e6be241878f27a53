package duckcheck

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anacrolix/torrent/bencode"
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/infohash/infohash/tools/badpeers"
)

// fetched is a dataset whose hashes were fetched by the real binary from
// a loopback peer serving their torrents (badpeers.Good), and one hash
// the peer does not serve, left not fetched.
type fetched struct {
	data, work string
	hashes     map[string]string // label → lowercase hex info_hash
	peer       string            // the peer's address, open until the test ends
}

// fetchTorrents runs dedup (of the hashes as a text list, work/hashes.txt),
// plan-retries, fetch (--no-dht, from the peer, into work/results.parquet)
// and merge over torrents, labelled, and a hash labelled "missing" that
// nobody serves.
func fetchTorrents(t *testing.T, torrents map[string]badpeers.Torrent) *fetched {
	t.Helper()
	needCommands(t, "dedup", "plan-retries", "fetch", "merge", "export")
	needLoopback(t)
	p, err := badpeers.Start(badpeers.Good, badpeers.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	dir := t.TempDir()
	f := &fetched{data: filepath.Join(dir, "data"), work: dir, hashes: map[string]string{}, peer: p.Addr()}
	var list strings.Builder
	for label, tor := range torrents {
		p.Add(tor)
		f.hashes[label] = hex.EncodeToString(tor.InfoHash[:])
	}
	missing := sha1.Sum([]byte("served by nobody"))
	f.hashes["missing"] = hex.EncodeToString(missing[:])
	for _, h := range f.hashes {
		list.WriteString(h + "\n")
	}
	hashes, jobs, results := filepath.Join(dir, "hashes.txt"), filepath.Join(dir, "jobs.parquet"), filepath.Join(dir, "results.parquet")
	if err := os.WriteFile(hashes, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInfohash(t, "dedup", "--data", f.data, hashes)
	mustInfohash(t, "plan-retries", "--data", f.data, "-o", jobs)
	mustInfohash(t, "fetch", "--no-dht", "--peer", p.Addr(), "--timeout", "20s", "--peer-timeout", "5s", "-o", results, jobs)
	mustInfohash(t, "merge", "--data", f.data, results)
	return f
}

// export writes table in format to a file of the work folder.
func (f *fetched) export(t *testing.T, table, format string) string {
	t.Helper()
	out := filepath.Join(f.work, table+"."+format)
	mustInfohash(t, "export", "--data", f.data, "--table", table, "--format", format, "-o", out)
	return out
}

// info bencodes an info dictionary as a badpeers torrent (v1 key).
func info(d map[string]any) badpeers.Torrent {
	b := bencode.MustMarshal(d)
	return badpeers.Torrent{InfoHash: sha1.Sum(b), Info: b}
}

// cellsOf reads cols of every row of a DuckDB relation as text, by label
// ("NULL" for null), hashExpr giving a row's hash as lowercase hex.
func cellsOf(t *testing.T, db *sql.DB, f *fetched, rel, hashExpr string, cols []string) map[string]string {
	t.Helper()
	var sel []string
	for _, c := range cols {
		sel = append(sel, "coalesce("+c+"::VARCHAR, 'NULL')")
	}
	_, rows, err := Rows(db, "SELECT "+hashExpr+", "+strings.Join(sel, ", ")+" FROM "+rel)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return byLabel(f, rows)
}

// byLabel keys rows (hash first, then the cells) by their hash's label.
func byLabel(f *fetched, rows [][]string) map[string]string {
	label := map[string]string{}
	for l, h := range f.hashes {
		label[h] = l
	}
	out := map[string]string{}
	for _, r := range rows {
		l, ok := label[r[0]]
		if !ok {
			l = "unexpected " + r[0]
		}
		out[l] = strings.Join(r[1:], " ")
	}
	return out
}

// arrowCells reads cols of every row of an Arrow IPC stream as cellsOf
// does: strings as themselves, binary as lowercase hex, numbers in
// decimal, a list as its length in brackets, null as NULL.
func arrowCells(t *testing.T, f *fetched, path string, cols []string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var rows [][]string
	for r.Next() {
		rec := r.Record()
		idx := func(name string) arrow.Array {
			is := rec.Schema().FieldIndices(name)
			if len(is) == 0 {
				t.Fatalf("%s: no column %s", path, name)
			}
			return rec.Column(is[0])
		}
		hashes := idx("info_hash").(*array.FixedSizeBinary)
		for i := range int(rec.NumRows()) {
			row := []string{hex.EncodeToString(hashes.Value(i))}
			for _, c := range cols {
				col := idx(c)
				if col.IsNull(i) {
					row = append(row, "NULL")
					continue
				}
				switch a := col.(type) {
				case *array.Binary:
					row = append(row, hex.EncodeToString(a.Value(i)))
				case *array.List:
					s, e := a.ValueOffsets(i)
					row = append(row, fmt.Sprintf("[%d]", e-s))
				default:
					row = append(row, col.ValueStr(i))
				}
			}
			rows = append(rows, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return byLabel(f, rows)
}

// exportRel is how DuckDB reads an export of format, and the expression
// of a row's hash (lowercase hex) and of its name_raw (hex) there. CSV is
// read with allow_quoted_nulls=false: a quoted empty cell ("") is an
// empty string, an empty cell null.
func exportRel(path, format string) (rel, hash, raw string) {
	switch format {
	case "csv":
		return "read_csv(" + Quote(path) + ", header=true, all_varchar=true, allow_quoted_nulls=false)", "info_hash", "name_raw"
	case "jsonl":
		return "read_json(" + Quote(path) + ", format='newline_delimited')", "info_hash", "name_raw"
	}
	return "read_parquet(" + Quote(path) + ")", "lower(hex(info_hash))", "lower(hex(name_raw))"
}

// TestKnownZerosReadByDuckDB: fetched torrents with an empty name, a
// size of 0 and no files have ” (name and name_raw), 0 and 0 in the
// torrents table and in every export of it and of the catalog, which only
// a hash not fetched has null. They were null, as if unknown, while
// name_utf8_valid said the empty name was valid UTF-8.
func TestKnownZerosReadByDuckDB(t *testing.T) {
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"empty": info(map[string]any{"name": "", "length": 0, "piece length": 16384, "pieces": ""}),
		"no files": info(map[string]any{"name": "no files", "files": []any{}, "piece length": 16384,
			"pieces": ""}),
		"named": info(map[string]any{"name": "named", "length": 5, "piece length": 16384,
			"pieces": strings.Repeat("p", 20)}),
	})
	db := duck(t)
	cols := []string{"name", "name_raw", "name_utf8_valid", "total_size", "piece_length", "file_count"}
	fetchedRows := map[string]string{
		"empty":    "  true 0 16384 1",
		"no files": "no files 6e6f2066696c6573 true 0 16384 0",
		"named":    "named 6e616d6564 true 5 16384 1",
	}
	check := func(t *testing.T, got map[string]string, withMissing bool) {
		t.Helper()
		want := map[string]string{}
		for l, w := range fetchedRows {
			want[l] = w
		}
		if withMissing {
			want["missing"] = "NULL NULL NULL NULL NULL NULL"
		}
		for l, w := range want {
			if got[l] != w {
				t.Errorf("%s: %s = %q, want %q", l, strings.Join(cols, " "), got[l], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d rows (%v), want %d", len(got), got, len(want))
		}
	}
	t.Run("torrents table", func(t *testing.T) {
		check(t, cellsOf(t, db, f, torrentsGlob(f.data), "lower(hex(info_hash))",
			[]string{"name", "lower(hex(name_raw))", "name_utf8_valid", "total_size", "piece_length", "file_count"}), false)
	})
	for _, table := range []string{"torrents", "catalog"} {
		for _, format := range []string{"parquet", "csv", "jsonl"} {
			t.Run(table+"/"+format, func(t *testing.T) {
				rel, hash, raw := exportRel(f.export(t, table, format), format)
				check(t, cellsOf(t, db, f, rel, hash, []string{"name", raw, "name_utf8_valid", "total_size", "piece_length", "file_count"}),
					table == "catalog")
			})
		}
		t.Run(table+"/arrow", func(t *testing.T) {
			check(t, arrowCells(t, f, f.export(t, table, "arrow"), cols), table == "catalog")
		})
	}
}

// TestCatalogFilesNullReadByDuckDB: in every format of the catalog
// export, files is null for a hash not fetched, as its other metadata
// columns are, and a list for a fetched torrent, empty when it has no
// files. It was an empty list for every hash not fetched.
func TestCatalogFilesNullReadByDuckDB(t *testing.T) {
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"no files": info(map[string]any{"name": "no files", "files": []any{}, "piece length": 16384, "pieces": ""}),
		"two files": info(map[string]any{"name": "two", "piece length": 16384, "pieces": strings.Repeat("p", 20),
			"files": []any{map[string]any{"length": 1, "path": []string{"a"}}, map[string]any{"length": 2, "path": []string{"b"}}}}),
	})
	db := duck(t)
	want := map[string]string{"no files": "false 0", "two files": "false 2", "missing": "true NULL"}
	check := func(t *testing.T, got map[string]string) {
		t.Helper()
		for l, w := range want {
			if got[l] != w {
				t.Errorf("%s: files IS NULL, len(files) = %q, want %q", l, got[l], w)
			}
		}
	}
	for _, format := range []string{"parquet", "csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			rel, hash, _ := exportRel(f.export(t, "catalog", format), format)
			files := "files"
			if format == "csv" { // a JSON array in a cell
				files = "files::JSON::VARCHAR[]"
			}
			check(t, cellsOf(t, db, f, rel, hash, []string{files + " IS NULL", "len(" + files + ")"}))
		})
	}
	t.Run("arrow", func(t *testing.T) {
		got := arrowCells(t, f, f.export(t, "catalog", "arrow"), []string{"files"})
		for l, v := range got { // "[n]" for a list of n, NULL
			if v == "NULL" {
				got[l] = "true NULL"
			} else {
				got[l] = "false " + strings.Trim(v, "[]")
			}
		}
		check(t, got)
	})
}

// TestV2TorrentMagnet: a v2-only torrent (BEP 52: meta version 2, a file
// tree; its DHT key the first 20 bytes of the SHA-256 of its info
// dictionary) fetched from a loopback peer gets the magnet
// xt=urn:btmh:1220<full SHA-256> from the torrents table, as from the
// state and the catalog, and that hash is the one DuckDB computes from
// the table's info_bytes and reads from the state's info_hash_v2. The
// torrents export gave urn:btih:<the truncation>, which a client checks
// as a SHA-1 and fails. A v1 torrent keeps its btih.
func TestV2TorrentMagnet(t *testing.T) {
	v2Info := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "v2 only", "piece length": 16384,
		"file tree": map[string]any{"a.txt": map[string]any{"": map[string]any{"length": 5, "pieces root": strings.Repeat("r", 32)}}}})
	full := sha256.Sum256(v2Info)
	v2 := badpeers.Torrent{InfoHash: [20]byte(full[:20]), Info: v2Info}
	f := fetchTorrents(t, map[string]badpeers.Torrent{
		"v2": v2,
		"v1": info(map[string]any{"name": "v1", "length": 5, "piece length": 16384, "pieces": strings.Repeat("p", 20)}),
	})
	db := duck(t)
	wantV2 := hex.EncodeToString(full[:])
	if got := cellsOf(t, db, f, torrentsGlob(f.data), "lower(hex(info_hash))", []string{"hash_type", "sha256(info_bytes)"})["v2"]; got != "2 "+wantV2 {
		t.Fatalf("torrents row of the v2 torrent: hash_type, sha256(info_bytes) = %q, want 2 %s", got, wantV2)
	}
	if got := cellsOf(t, db, f, StateGlob(f.data), "lower(hex(info_hash))", []string{"lower(hex(info_hash_v2))"})["v2"]; got != wantV2 {
		t.Fatalf("state: info_hash_v2 of the v2 torrent = %s, want %s", got, wantV2)
	}
	want := map[string]string{"v2": "urn:btmh:1220" + wantV2, "v1": "urn:btih:" + f.hashes["v1"], "missing": "urn:btih:" + f.hashes["missing"]}
	for _, table := range []string{"torrents", "state", "catalog"} {
		t.Run(table, func(t *testing.T) {
			var rows [][]string
			for i, line := range lines(t, f.export(t, table, "magnet")) {
				u, err := url.Parse(string(line))
				if err != nil || u.Scheme != "magnet" {
					t.Fatalf("line %d is not a magnet URI (%v): %q", i+1, err, line)
				}
				xt := u.Query()["xt"]
				if len(xt) != 1 {
					t.Fatalf("line %d: xt %q, want one", i+1, xt)
				}
				h := strings.TrimPrefix(strings.TrimPrefix(xt[0], "urn:btih:"), "urn:btmh:1220")
				rows = append(rows, []string{h[:min(40, len(h))], xt[0]}) // a v2 hash's key: its first 20 bytes
			}
			got := byLabel(f, rows)
			for l, w := range want {
				if table == "torrents" && l == "missing" {
					continue
				}
				if got[l] != w {
					t.Errorf("%s: xt %q, want %q", l, got[l], w)
				}
			}
		})
	}
}
