package duckcheck

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// tableRef is a table as DuckDB reads it through the documented globs:
// what every export of it must hold.
type tableRef struct {
	name  string
	rel   string // SQL relation
	cols  []string
	types map[string]string
	kinds map[string]string
	rows  canonRows
}

func loadRef(t *testing.T, db *sql.DB, name, rel string) tableRef {
	t.Helper()
	r := tableRef{name: name, rel: rel, kinds: map[string]string{}}
	r.cols, r.types = describe(t, db, rel)
	for c, typ := range r.types {
		r.kinds[c] = kindOf(typ)
	}
	_, r.rows = queryCanon(t, db, "SELECT * FROM "+rel, r.kinds)
	return r
}

// stateRel is the state as export writes it: the state's rows, their
// lease_id and lease_until (always null in its files) from the leases
// table.
func stateRel(data string) string {
	return `(SELECT s.* EXCLUDE (prefix) REPLACE (l.lease_id AS lease_id, l.lease_until AS lease_until)
	FROM ` + StateGlob(data) + ` s LEFT JOIN ` + leasesGlob(data) + ` l USING (info_hash))`
}

// leasesGlob reads the leases table through its documented glob.
func leasesGlob(data string) string {
	return "read_parquet(" + Quote(filepath.Join(data, "leases", "current", "*.parquet")) + ")"
}

// catalogRel is the catalog as the tables define it: every state row
// with its metadata when fetched.
func catalogRel(data string) string {
	return `(SELECT s.info_hash, s.info_hash_v2, s.hash_type, s.first_seen, s.last_seen, s.seen_count,
		s.last_source, s.activity, s.metadata_status, s.attempts, s.last_attempt, s.last_failure,
		s.next_retry, s.tier, s.first_source, s.last_failure_at, s.info_hash_v2_source, t.fetched_at, t.served_by, t.metadata_size,
		t.name, t.name_raw, t.name_utf8_valid, t.total_size, t.piece_length,
		t.file_count, t.files, t.private
	FROM ` + StateGlob(data) + ` s LEFT JOIN ` + torrentsGlob(data) + ` t USING (info_hash))`
}

// formatSkips are the columns a format leaves out.
var formatSkips = map[string][]string{
	"csv": {"info_bytes"}, "jsonl": {"info_bytes"}, "es-bulk": {"info_bytes", "name_raw"},
}

// checkExports exports every table in every format and reads each back.
func checkExports(t *testing.T, db *sql.DB, c *crawl) {
	refs := []tableRef{
		loadRef(t, db, "state", stateRel(c.data)),
		loadRef(t, db, "torrents", "(SELECT * EXCLUDE (prefix) FROM "+torrentsGlob(c.data)+")"),
		loadRef(t, db, "catalog", catalogRel(c.data)),
	}
	// The awkward names must be there, or the quoting checks check nothing.
	for _, name := range awkwardNames {
		found := false
		for _, r := range refs[1].rows {
			found = found || r["name_raw"] == fmt.Sprintf("%x", name)
		}
		if !found {
			t.Errorf("no torrent is named %q: the text formats' quoting is not exercised", name)
		}
	}
	checks := map[string]func(*testing.T, *sql.DB, tableRef, string, []string){
		"parquet": checkParquetExport, "csv": checkCSVExport, "jsonl": checkJSONLExport,
		"es-bulk": checkESBulkExport, "magnet": checkMagnetExport, "arrow": checkArrowExport,
	}
	for _, ref := range refs {
		for _, format := range []string{"parquet", "csv", "jsonl", "arrow", "magnet", "es-bulk"} {
			t.Run(ref.name+"/"+format, func(t *testing.T) {
				out := filepath.Join(c.work, "export-"+ref.name+"."+format)
				mustInfohash(t, "export", "--data", c.data, "--table", ref.name, "--format", format, "-o", out)
				var cols []string
				for _, col := range ref.cols {
					if !slices.Contains(formatSkips[format], col) {
						cols = append(cols, col)
					}
				}
				checks[format](t, db, ref, out, cols)
			})
		}
		t.Run(ref.name+"/empty", func(t *testing.T) { checkEmptyExports(t, db, c, ref) })
	}
	t.Run("catalog/filters", func(t *testing.T) { checkFilters(t, c, refs[2]) })
}

// Parquet: DuckDB reads the same columns with the same types and the same
// rows, sorted by info_hash, zstd-compressed, with statistics.
func checkParquetExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	rel := "read_parquet(" + Quote(out) + ")"
	gotCols, types := describe(t, db, rel)
	if !slices.Equal(gotCols, cols) {
		t.Errorf("columns %v, table has %v", gotCols, cols)
	}
	for _, c := range cols {
		if types[c] != ref.types[c] {
			t.Errorf("column %s is %s, table has %s", c, types[c], ref.types[c])
		}
	}
	_, got := queryCanon(t, db, "SELECT * FROM "+rel, ref.kinds)
	compareCanon(t, "parquet "+ref.name, got, ref.rows, cols)
	if n := scalar[int64](t, db, `SELECT count(*) FROM (SELECT info_hash,
		lag(info_hash) OVER (ORDER BY file_row_number) AS prev FROM read_parquet(`+Quote(out)+`, file_row_number=true))
		WHERE prev >= info_hash`); n != 0 {
		t.Errorf("%d rows are not in info_hash order", n)
	}
	_, meta, err := Rows(db, `SELECT path_in_schema, compression, stats_min_value IS NOT NULL
		FROM parquet_metadata(`+Quote(out)+`) WHERE path_in_schema = 'info_hash'`)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta) == 0 && len(ref.rows) > 0 {
		t.Errorf("parquet_metadata shows no info_hash column chunk")
	}
	for _, m := range meta {
		if m[1] != "ZSTD" || m[2] != "true" {
			t.Errorf("info_hash chunk: compression %s, has min statistics %s; want ZSTD, true", m[1], m[2])
		}
	}
}

// CSV: a header row naming the columns, RFC 4180 quoting that Go's strict
// reader accepts, and DuckDB's read_csv giving back the table's values.
func checkCSVExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("Go's CSV reader rejects the export: %v", err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], cols) {
		t.Fatalf("header row %v, want %v", recs[:min(1, len(recs))], cols)
	}
	if len(recs)-1 != len(ref.rows) {
		t.Errorf("Go's CSV reader finds %d records, table has %d rows", len(recs)-1, len(ref.rows))
	}
	rel := "read_csv(" + Quote(out) + ", header=true, all_varchar=true)"
	if gotCols, _ := describe(t, db, rel); !slices.Equal(gotCols, cols) {
		t.Errorf("DuckDB reads columns %v, want %v", gotCols, cols)
	}
	_, got := queryCanon(t, db, "SELECT * FROM "+rel, ref.kinds)
	compareCanon(t, "csv "+ref.name, got, ref.rows, cols)
	// An analyst's plain read_csv sniffs the header and the quoting too.
	sniffed := "read_csv(" + Quote(out) + ")"
	if gotCols, _ := describe(t, db, sniffed); !slices.Equal(gotCols, cols) {
		t.Errorf("DuckDB's sniffer reads columns %v, want %v", gotCols, cols)
	}
	if n := scalar[int64](t, db, "SELECT count(*) FROM "+sniffed); n != int64(len(ref.rows)) {
		t.Errorf("DuckDB's sniffer reads %d rows, want %d", n, len(ref.rows))
	}
}

// JSON Lines: one object per line with the columns in order, hashes as
// hex and timestamps as RFC 3339 text; DuckDB's read_json agrees.
func checkJSONLExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	got := canonRows{}
	for i, line := range lines(t, out) {
		m, keys, err := jsonObject(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if !slices.Equal(keys, cols) {
			t.Fatalf("line %d has keys %v, want %v", i+1, keys, cols)
		}
		if err := canonRow(got, m, ref.kinds); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	compareCanon(t, "jsonl "+ref.name, got, ref.rows, cols)
	if len(ref.rows) == 0 {
		return
	}
	_, duck := queryCanon(t, db, "SELECT * FROM read_json("+Quote(out)+", format='newline_delimited')", ref.kinds)
	compareCanon(t, "jsonl read by DuckDB "+ref.name, duck, ref.rows, cols)
}

// es-bulk: action and document lines alternate; the action indexes the
// document under _id = its hex hash; documents hold the table's values.
func checkESBulkExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	ls := lines(t, out)
	if len(ls)%2 != 0 {
		t.Fatalf("%d lines: action and document lines do not pair up", len(ls))
	}
	got := canonRows{}
	for i := 0; i < len(ls); i += 2 {
		action, keys, err := jsonObject(ls[i])
		if err != nil || !slices.Equal(keys, []string{"index"}) {
			t.Fatalf("line %d is not an index action (%v): %.200q", i+1, err, ls[i])
		}
		meta, _ := action["index"].(map[string]any)
		id, _ := meta["_id"].(string)
		if meta["_index"] != "infohash" || id == "" {
			t.Errorf("line %d: action %v, want _index infohash and an _id", i+1, meta)
		}
		doc, keys, err := jsonObject(ls[i+1])
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if !slices.Equal(keys, cols) {
			t.Fatalf("line %d has keys %v, want %v", i+2, keys, cols)
		}
		if err := canonRow(got, doc, ref.kinds); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if doc["info_hash"] != id {
			t.Errorf("line %d: _id %q but the document's info_hash is %v", i+1, id, doc["info_hash"])
		}
	}
	compareCanon(t, "es-bulk "+ref.name, got, ref.rows, cols)
}

// Magnets: one per row, xt=urn:btih:<40 lowercase hex>, and dn= the name
// for fetched torrents only.
func checkMagnetExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	seen := map[string]bool{}
	withName, errs := 0, 0
	for i, line := range lines(t, out) {
		if errs > 5 {
			t.Fatalf("giving up after line %d", i)
		}
		u, err := url.Parse(string(line))
		if err != nil || u.Scheme != "magnet" || u.Opaque != "" || u.Path != "" {
			t.Fatalf("line %d is not a magnet URI (%v): %.200q", i+1, err, line)
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			t.Fatalf("line %d: query: %v", i+1, err)
		}
		xt := q["xt"]
		h, ok := "", len(xt) == 1
		if ok {
			h, ok = strings.CutPrefix(xt[0], "urn:btih:")
		}
		row, known := ref.rows[h]
		if !ok || !known || seen[h] {
			errs++
			t.Errorf("line %d: xt %v is not urn:btih: and a hash of the table seen once", i+1, xt)
			continue
		}
		seen[h] = true
		name := row["name"] // "" for state rows and unfetched hashes
		if dn := q["dn"]; (name == "" && dn != nil) || (name != "" && !slices.Equal(dn, []string{name})) {
			errs++
			t.Errorf("line %d: dn %q, want %q", i+1, dn, name)
		}
		if name != "" {
			withName++
		}
		for k := range q {
			if k != "xt" && k != "dn" {
				t.Errorf("line %d: unexpected parameter %s", i+1, k)
			}
		}
	}
	if len(seen) != len(ref.rows) {
		t.Errorf("%d magnets for %d rows", len(seen), len(ref.rows))
	}
	if ref.name != "state" && withName == 0 {
		t.Errorf("no magnet carries a name (dn=), but the table has fetched torrents")
	}
}

// Arrow IPC: the schema types hashes as FixedSizeBinary(20) and
// timestamps as timestamp[ms, UTC]; the rows decode (formats/rowio) to
// the table's values.
func checkArrowExport(t *testing.T, db *sql.DB, ref tableRef, out string, cols []string) {
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not an Arrow IPC stream: %v", err)
	}
	var names []string
	for _, f := range r.Schema().Fields() {
		names = append(names, f.Name)
		switch {
		case f.Name == "info_hash":
			if fs, ok := f.Type.(*arrow.FixedSizeBinaryType); !ok || fs.ByteWidth != 20 {
				t.Errorf("info_hash is %s, want fixed_size_binary[20]", f.Type)
			}
		case ref.kinds[f.Name] == "ts":
			if ts, ok := f.Type.(*arrow.TimestampType); !ok || ts.Unit != arrow.Millisecond || ts.TimeZone != "UTC" {
				t.Errorf("%s is %s, want timestamp[ms, tz=UTC]", f.Name, f.Type)
			}
		}
	}
	rows := 0
	for r.Next() {
		rows += int(r.Record().NumRows())
	}
	if err := r.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	r.Release()
	if !slices.Equal(names, cols) || rows != len(ref.rows) {
		t.Errorf("stream has columns %v and %d rows; table has %v and %d", names, rows, cols, len(ref.rows))
	}
	var got canonRows
	switch ref.name {
	case "state":
		got = arrowRows[schema.State](t, b, ref)
	case "torrents":
		got = arrowRows[schema.Torrent](t, b, ref)
	default:
		got = arrowRows[schema.Catalog](t, b, ref)
	}
	compareCanon(t, "arrow "+ref.name, got, ref.rows, cols)
}

func arrowRows[T any](t *testing.T, stream []byte, ref tableRef) canonRows {
	t.Helper()
	r, err := rowio.OpenArrow[T]("arrow export", bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := canonRows{}
	for i := range rows {
		if err := canonRow(got, structRow(reflect.ValueOf(rows[i])), ref.kinds); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	return got
}

// lines reads a text export: every line ends in \n.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Errorf("%s does not end with a newline", filepath.Base(path))
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
