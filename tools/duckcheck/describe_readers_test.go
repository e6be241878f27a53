package duckcheck

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// describeReaders returns the read_csv and read_ndjson calls
// `infohash export --describe table` ends with, each with F replaced by
// the quoted path.
func describeReaders(t *testing.T, table, path string) (csvCall, jsonCall string) {
	t.Helper()
	out := strings.Split(strings.TrimSpace(mustInfohash(t, "export", "--describe", table)), "\n")
	if len(out) < 2 {
		t.Fatalf("export --describe %s prints %d lines", table, len(out))
	}
	csvCall, jsonCall = out[len(out)-2], out[len(out)-1]
	if !strings.HasPrefix(csvCall, "read_csv(F, ") || !strings.HasPrefix(jsonCall, "read_ndjson(F, ") {
		t.Fatalf("export --describe %s does not end with its read_csv(F, …) and read_ndjson(F, …) calls:\n%s\n%s",
			table, csvCall, jsonCall)
	}
	q := Quote(path)
	return strings.Replace(csvCall, "F", q, 1), strings.Replace(jsonCall, "F", q, 1)
}

// commitTorrent commits a torrents row for h to dataset data: a quoted
// name whose raw bytes' hex is digits alone, a file whose path needs
// JSON's escapes (a newline, a control character).
func commitTorrent(t *testing.T, data string, h schema.Hash) {
	t.Helper()
	ctx := context.Background()
	d, err := dataset.Open(ctx, data, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	path := `dir\sub/"q", {x} é` + "\nline\x01" // a csv cell's STRUCT cast would keep \n, \u0001 as n, u0001
	name := `"Hits" 2024`                       // its bytes' hex has no letter: 224869747322203230323420
	row := schema.Torrent{InfoHash: h, HashType: schema.HashV1, FetchedAt: time.Now().UnixMilli(), MetadataSize: 40,
		Meta: schema.Meta{Name: &name, NameRaw: []byte(name), NameUTF8Valid: true,
			TotalSize: new(int64(5)), FileCount: new(int32(1)),
			Files: []schema.File{{Path: path, PathRaw: append([]byte{0xff}, path...), Length: 5}}}}
	key := fmt.Sprintf("%02x", h[0])
	fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{row})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
	if _, err := tx.Commit(ctx, dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

// textType is the DuckDB type a text export's column should read as
// through --describe's calls, given its type in the Parquet export:
// bytes are hex text, and in a csv cell a list of structs stays JSON.
func textType(parquetType string, csv bool) string {
	if csv && strings.HasPrefix(parquetType, "STRUCT(") && strings.HasSuffix(parquetType, "[]") {
		return "JSON"
	}
	return strings.ReplaceAll(parquetType, "BLOB", "VARCHAR")
}

// TestDescribeReadersTypeEveryColumn: the read_csv and read_ndjson calls
// `export --describe TABLE` ends with read every table's csv and jsonl
// export with the Parquet export's columns and types (bytes as hex
// text; a csv cell's list of structs as JSON) and its values, in a
// session whose TimeZone is not UTC. DuckDB's sniffer does not: on this
// dataset (no hash reactivated nor announced) it reads the state's
// reactivated_at from csv as VARCHAR and from jsonl as JSON, where
// `reactivated_at > now()` fails; jsonl times as TIMESTAMP; and the
// torrent's name_raw, hex of digits alone, from csv as a DOUBLE.
func TestDescribeReadersTypeEveryColumn(t *testing.T) {
	needCommands(t, "dedup", "plan-retries", "export")
	dir := t.TempDir()
	data, list := filepath.Join(dir, "data"), filepath.Join(dir, "hashes.txt")
	var hashes strings.Builder
	for i := range 6 {
		fmt.Fprintf(&hashes, "%02x%038x\n", i*40+3, i+1)
	}
	if err := os.WriteFile(list, []byte(hashes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	mustInfohash(t, "dedup", "--data", data, "--now", now, list)
	mustInfohash(t, "plan-retries", "--data", data, "--now", now, "--limit", "2", "-o", filepath.Join(dir, "jobs.parquet"))
	commitTorrent(t, data, schema.Hash{0x2b, 19: 0x02}) // the second hash listed

	db := duck(t)
	if _, err := db.Exec("SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, table := range []string{"state", "torrents", "catalog", "leases", "peers", "ledger"} {
		for _, format := range []string{"parquet", "csv", "jsonl"} {
			files[table+"."+format] = filepath.Join(dir, table+"."+format)
			mustInfohash(t, "export", "--data", data, "--table", table, "-o", files[table+"."+format])
		}
	}

	// The sniffer's types, which the calls exist to avoid: else this
	// dataset proves nothing.
	for _, s := range []struct{ table, rel, col, want string }{
		{"state", "read_csv(" + Quote(files["state.csv"]) + ")", "reactivated_at", "VARCHAR"},
		{"state", "read_json(" + Quote(files["state.jsonl"]) + ")", "reactivated_at", "JSON"},
		{"torrents", "read_csv(" + Quote(files["torrents.csv"]) + ")", "name_raw", "DOUBLE"},
	} {
		if got := columnType(t, db, s.rel, s.col); got != s.want {
			t.Errorf("DuckDB's sniffer reads %s of %s as %s, want %s (as --describe says): the dataset no longer shows why its calls matter",
				s.col, s.rel, got, s.want)
		}
	}

	for _, table := range []string{"state", "torrents", "catalog", "leases", "peers", "ledger"} {
		pq := "read_parquet(" + Quote(files[table+".parquet"]) + ")"
		cols, types := describe(t, db, pq)
		cols = slices.DeleteFunc(cols, func(c string) bool { return c == "info_bytes" })
		kinds := map[string]string{}
		for c, typ := range types {
			kinds[c] = kindOf(typ)
		}
		csvCall, _ := describeReaders(t, table, files[table+".csv"])
		_, jsonCall := describeReaders(t, table, files[table+".jsonl"])
		for _, rc := range []struct {
			format, rel string
			csv         bool
		}{{"csv", csvCall, true}, {"jsonl", jsonCall, false}} {
			t.Run(table+"/"+rc.format, func(t *testing.T) {
				gotCols, gotTypes := describe(t, db, rc.rel)
				if !slices.Equal(gotCols, cols) {
					t.Fatalf("--describe's call reads columns %v, the Parquet export has %v", gotCols, cols)
				}
				for _, c := range cols {
					if want := textType(types[c], rc.csv); gotTypes[c] != want {
						t.Errorf("--describe's call reads %s as %s, want %s (Parquet: %s)", c, gotTypes[c], want, types[c])
					}
				}
				checkSameRows(t, db, table, rc.rel, pq, cols, kinds)
			})
		}
	}

	// What an analyst then writes runs, and counts what the dataset holds.
	for _, q := range []struct{ name, query, want string }{
		{"state", "SELECT count(*) FILTER (WHERE lease_until > now()), count(*) FILTER (WHERE reactivated_at > now()), " +
			"sum(len(avoid_peers)) FROM %s", "2 0 0"},
		{"catalog", "SELECT sum(total_size), count(fetched_at), count(*) FILTER (WHERE last_attempt > now()) FROM %s", "5 1 0"},
	} {
		csvCall, _ := describeReaders(t, q.name, files[q.name+".csv"])
		_, jsonCall := describeReaders(t, q.name, files[q.name+".jsonl"])
		for _, rel := range []string{csvCall, jsonCall} {
			_, rows, err := Rows(db, fmt.Sprintf(q.query, rel))
			if err != nil {
				t.Errorf("%s: %v", fmt.Sprintf(q.query, rel), err)
			} else if got := strings.Join(rows[0], " "); got != q.want {
				t.Errorf("%s: %s, want %s", fmt.Sprintf(q.query, rel), got, q.want)
			}
		}
	}
}

// columnType is DuckDB's type of column col of relation rel.
func columnType(t *testing.T, db *sql.DB, rel, col string) string {
	t.Helper()
	_, types := describe(t, db, rel)
	return types[col]
}

// checkSameRows compares the rows of rel with the Parquet export pq's
// over cols: by hash through the canonical forms for a table keyed by
// info_hash, else as sorted lists of formatted rows (these tables have
// no bytes, lists or floats to render apart).
func checkSameRows(t *testing.T, db *sql.DB, table, rel, pq string, cols []string, kinds map[string]string) {
	t.Helper()
	list := strings.Join(cols, ", ")
	if slices.Contains(cols, "info_hash") {
		_, want := queryCanon(t, db, "SELECT "+list+" FROM "+pq, kinds)
		_, got := queryCanon(t, db, "SELECT "+list+" FROM "+rel, kinds)
		compareCanon(t, table, got, want, cols)
		return
	}
	sorted := func(rel string) []string {
		_, rows, err := Rows(db, "SELECT "+list+" FROM "+rel)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = strings.Join(r, "\t")
		}
		slices.Sort(out)
		return out
	}
	if got, want := sorted(rel), sorted(pq); !slices.Equal(got, want) {
		t.Errorf("%s: rows\n%s\nthe Parquet export's\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
