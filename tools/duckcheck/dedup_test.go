package duckcheck

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

// copyAsDuckDB has DuckDB rewrite an observation file the way an analyst's
// COPY would: info_hash a BLOB (plain BYTE_ARRAY), observed_at a TIMESTAMP
// (INT64 microseconds, not UTC-adjusted).
func copyAsDuckDB(t *testing.T, in, out, hashExpr string) {
	t.Helper()
	db := duck(t)
	q := `COPY (SELECT ` + hashExpr + ` AS info_hash, info_hash_v2, hash_type,
		observed_at::TIMESTAMP AS observed_at, source, node_addr, node_id, peer_port, run_id
		FROM read_parquet(` + Quote(in) + `)) TO ` + Quote(out) + ` (FORMAT parquet)`
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("DuckDB COPY: %v", err)
	}
	_, rows, err := Rows(db, `SELECT name, type, logical_type FROM parquet_schema(`+Quote(out)+`)
		WHERE name IN ('info_hash', 'observed_at') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0][1] != "BYTE_ARRAY" || rows[1][1] != "INT64" ||
		!strings.Contains(rows[1][2], "MicroSeconds") || !strings.Contains(rows[1][2], "isAdjustedToUTC=0") {
		t.Fatalf("DuckDB wrote an unexpected layout, so this test checks nothing: %v", rows)
	}
}

func TestDedupStateMatchesInput(t *testing.T) {
	need(t, "dedup")
	tests := []struct {
		name  string
		rows  int64
		style obsgen.Style
		copy  bool // rewrite the file with DuckDB's COPY first
	}{
		{name: "infohash parquet", rows: 100_000, style: obsgen.Native},
		{name: "duckdb-style parquet from obsgen", rows: 30_000, style: obsgen.DuckDB},
		{name: "parquet written by DuckDB COPY", rows: 30_000, style: obsgen.Native, copy: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, tr := generate(t, dir, "obs.parquet", config(tc.rows, nil), tc.style)
			if tc.copy {
				out := filepath.Join(dir, "duck.parquet")
				copyAsDuckDB(t, in, out, "info_hash::BLOB")
				in = out
			}
			data := filepath.Join(dir, "data")
			mustInfohash(t, "dedup", "--data", data, in)
			db := duck(t)
			checkState(t, db, data, stateWant{hashes: tr.Distinct, seen: tr.Rows,
				first: tr.MinObservedAt, last: tr.MaxObservedAt, v2: tr.V2Distinct})
			checkPerHash(t, db, data, expectFrom(in))
			checkFirstSource(t, db, data, in)
		})
	}
}

// checkFirstSource: after one dedup run over in, each hash's first_source
// is the source of its earliest observation there (at a tie, in ms, the
// greatest; empty or null: import), as DuckDB reads the state glob.
func checkFirstSource(t *testing.T, db *sql.DB, dir, in string) {
	t.Helper()
	q := fmt.Sprintf(`WITH o AS (SELECT info_hash::BLOB AS h, epoch_ms(observed_at) AS ms,
			coalesce(nullif(source::VARCHAR, ''), 'import') AS src FROM read_parquet(%s)),
		e AS (SELECT h, max(src) AS src FROM (SELECT *, min(ms) OVER (PARTITION BY h) AS first FROM o)
			WHERE ms = first GROUP BY h)
	SELECT lower(hex(s.info_hash)), s.first_source, e.src FROM %s s JOIN e ON s.info_hash = e.h
	WHERE s.first_source IS DISTINCT FROM e.src ORDER BY 1 LIMIT 5`, Quote(in), StateGlob(dir))
	_, rows, err := Rows(db, q)
	if err != nil {
		t.Fatalf("first_source comparison: %v", err)
	}
	for _, r := range rows {
		t.Errorf("hash %s: first_source %s, the earliest observation's %s", r[0], r[1], r[2])
	}
}

// A batch applied over an existing state adds its new hashes and counts;
// applying the same batch again changes nothing.
func TestDedupIncremental(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	base, tb := generate(t, dir, "base.parquet", config(60_000, nil), obsgen.Native)
	batch, tc := generate(t, dir, "batch.parquet", config(20_000, func(c *obsgen.Config) {
		c.Known, c.Distinct = tb.After, 2_000
		c.Start = c.Start.Add(c.Window)
	}), obsgen.Native)
	data := filepath.Join(dir, "data")
	mustInfohash(t, "dedup", "--data", data, base)
	mustInfohash(t, "dedup", "--data", data, batch)
	db := duck(t)
	want := stateWant{hashes: tc.After, seen: tb.Rows + tc.Rows,
		first: tb.MinObservedAt, last: tc.MaxObservedAt, v2: -1}
	checkState(t, db, data, want)
	checkPerHash(t, db, data, expectFrom(base, batch))

	mustInfohash(t, "dedup", "--data", data, batch)
	checkState(t, db, data, want)
}

// A list of hex hashes and magnet URIs is an input too: one observation
// per line.
func TestDedupTextList(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	in := filepath.Join(dir, "hashes.txt")
	tr, err := obsgen.WriteText(context.Background(), in, config(20_000, nil), obsgen.Mixed)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	mustInfohash(t, "dedup", "--data", data, in)
	checkState(t, duck(t), data, stateWant{hashes: tr.Distinct, seen: tr.Rows, v2: -1})
}

// A DuckDB file whose BLOB hash has the wrong length is bad input: exit 2,
// a message naming the file, and the committed state unchanged.
func TestDedupRejectsShortBlobHash(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	base, tb := generate(t, dir, "base.parquet", config(5_000, nil), obsgen.Native)
	data := filepath.Join(dir, "data")
	mustInfohash(t, "dedup", "--data", data, base)

	in, _ := generate(t, dir, "more.parquet", config(5_000, func(c *obsgen.Config) { c.Seed = 2 }), obsgen.Native)
	bad := filepath.Join(dir, "short-hash.parquet")
	// Row 4321 gets a 19-byte hash; the rest are fine.
	copyAsDuckDB(t, in, bad, "CASE WHEN observed_at = (SELECT observed_at FROM read_parquet("+Quote(in)+
		") LIMIT 1 OFFSET 4321) THEN unhex(substr(hex(info_hash::BLOB), 1, 38)) ELSE info_hash::BLOB END")
	_, stderr, code := infohash(t, "dedup", "--data", data, bad)
	if code != 2 {
		t.Errorf("exit %d, want 2 (bad input); stderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "short-hash.parquet") {
		t.Errorf("the error does not name the file: %q", stderr)
	}
	checkState(t, duck(t), data, stateWant{hashes: tb.Distinct, seen: tb.Rows,
		first: tb.MinObservedAt, last: tb.MaxObservedAt, v2: tb.V2Distinct})
}

// The export formats read back by DuckDB equal the state.
func TestExportReadByDuckDB(t *testing.T) {
	need(t, "dedup")
	need(t, "export")
	dir := t.TempDir()
	in, tr := generate(t, dir, "obs.parquet", config(30_000, nil), obsgen.Native)
	data := filepath.Join(dir, "data")
	mustInfohash(t, "dedup", "--data", data, in)
	db := duck(t)
	for format, reader := range map[string]string{
		"parquet": "read_parquet(%s)",
		"csv":     "read_csv(%s, header=true)",
		"jsonl":   "read_json(%s, format='newline_delimited')",
	} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(dir, "state."+format)
			mustInfohash(t, "export", "--data", data, "--table", "state", "--format", format, "-o", out)
			if st, err := os.Stat(out); err != nil || st.Size() == 0 {
				t.Fatalf("no export at %s: %v", out, err)
			}
			src := strings.Replace(reader, "%s", Quote(out), 1)
			hash := "lower(hex(info_hash))"
			if format != "parquet" {
				hash = "info_hash"
				bad := scalar[int64](t, db, `SELECT count(*) FROM `+src+
					` WHERE NOT regexp_full_match(info_hash::VARCHAR, '[0-9a-f]{40}')`)
				if bad != 0 {
					t.Errorf("%d hashes are not 40 lowercase hex digits", bad)
				}
			}
			// Timestamps round-trip to the state's milliseconds (RFC 3339 text in csv/jsonl).
			diff := scalar[int64](t, db, `WITH x AS (SELECT `+hash+` AS h,
					epoch_ms(first_seen::TIMESTAMPTZ) AS f, epoch_ms(last_seen::TIMESTAMPTZ) AS l,
					seen_count::BIGINT AS n FROM `+src+`),
				s AS (SELECT lower(hex(info_hash)) AS h, epoch_ms(first_seen) AS f,
					epoch_ms(last_seen) AS l, seen_count AS n FROM `+StateGlob(data)+`)
				SELECT count(*) FROM x FULL OUTER JOIN s USING (h)
				WHERE x.f IS DISTINCT FROM s.f OR x.l IS DISTINCT FROM s.l OR x.n IS DISTINCT FROM s.n`)
			if diff != 0 {
				t.Errorf("%d hashes differ between the %s export and the state", diff, format)
			}
			if n := scalar[int64](t, db, "SELECT count(*) FROM "+src); n != tr.Distinct {
				t.Errorf("export has %d rows, want %d", n, tr.Distinct)
			}
		})
	}
}

// partitions reads the state through the documented glob: per prefix,
// its hash count and observation sum.
func partitions(db *sql.DB, dir string) (map[string][2]int64, error) {
	_, rows, err := Rows(db, "SELECT prefix::VARCHAR, count(*), sum(seen_count) FROM "+StateGlob(dir)+" GROUP BY 1")
	if err != nil {
		return nil, err
	}
	m := make(map[string][2]int64, len(rows))
	for _, r := range rows {
		var n, s int64
		fmt.Sscan(r[1], &n)
		fmt.Sscan(r[2], &s)
		m[r[0]] = [2]int64{n, s}
	}
	return m, nil
}

// The documented glob while dedup commits: a query either fails with a
// missing file (README: a query running across a commit may) or shows
// every partition as it was before the commit, or every one as it is
// after it: never some of each (issue 2). Each snapshot names its files
// anew, so a listing that straddles the commit names files that the new
// snapshot directory lacks.
func TestReaderDuringCommit(t *testing.T) {
	need(t, "dedup")
	dir := t.TempDir()
	base, tb := generate(t, dir, "base.parquet", config(40_000, nil), obsgen.Native)
	batch, _ := generate(t, dir, "batch.parquet", config(150_000, func(c *obsgen.Config) {
		c.Known, c.Distinct = tb.After, 30_000
	}), obsgen.Native)
	data := filepath.Join(dir, "data")
	mustInfohash(t, "dedup", "--data", data, base)
	db := duck(t)
	before, err := partitions(db, data)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, infohashBin, "dedup", "--data", data, batch)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var polls []map[string][2]int64
	failed := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("dedup: %v\n%s", err, stderr.String())
			}
			running = false
		default:
			m, err := partitions(db, data)
			if err != nil && strings.Contains(err.Error(), "No such file") {
				failed++
				continue
			}
			if err != nil {
				t.Fatalf("poll %d while dedup commits: %v", len(polls), err)
			}
			polls = append(polls, m)
		}
	}
	after, err := partitions(db, data)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range polls {
		var old, fresh int
		for p, v := range m {
			switch {
			case before[p] == after[p] && v == before[p]:
			case v == before[p]:
				old++
			case v == after[p]:
				fresh++
			default:
				t.Fatalf("poll %d: partition %s has %v, neither before (%v) nor after (%v)", i, p, v, before[p], after[p])
			}
		}
		if len(m) != len(before) && len(m) != len(after) {
			t.Fatalf("poll %d saw %d partitions (before %d, after %d)", i, len(m), len(before), len(after))
		}
		if old > 0 && fresh > 0 {
			t.Errorf("poll %d returned %d partitions from before the commit and %d from after it, without an error", i, old, fresh)
		}
	}
	t.Logf("%d polls during the commit read, %d failed with a missing file", len(polls), failed)
}
