package textenc

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// objectJSONL is how JSON Lines were written before writeJSON: each row
// an Object, marshalled by encoding/json. writeJSON must match it byte
// for byte.
func objectJSONL[T any](t *testing.T, e *Encoder[T], rows []T) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(e.Object(&rows[i])); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// knownEmpty stands for a known empty value of a nullable column in
// recordsCSV's records: encoding/csv writes "" and null alike, as an
// empty cell, where the CSV export quotes the known one ("").
const knownEmpty = "\x00known empty\x00"

// recordsCSV is how CSV was written before writeCSV appended cells: each
// cell a string from cell(value), written by encoding/csv, and a known
// empty value of a nullable column quoted.
func recordsCSV[T any](t *testing.T, rows []T) string {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	fs := fieldsFor[T](nil)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	w.Write(names)
	rec := make([]string, len(fs))
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for j, f := range fs {
			x := f.value(v.FieldByIndex(f.index))
			rec[j] = cell(x)
			if x != nil && rec[j] == "" && f.optional {
				rec[j] = knownEmpty
			}
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(b.String(), knownEmpty, `""`)
}

func fastCSV[T any](t *testing.T, rows []T) string {
	t.Helper()
	var b bytes.Buffer
	e := NewCSV[T](&b)
	if err := e.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func fastJSONL[T any](t *testing.T, rows []T) (string, *Encoder[T]) {
	t.Helper()
	var b bytes.Buffer
	e := NewJSONL[T](&b)
	if err := e.Write(rows); err != nil {
		t.Fatal(err)
	}
	return b.String(), e
}

// TestJSONLMatchesObjectMarshalling covers what each kind of column can
// hold: nulls and zero values, strings that need escaping, floats in
// fixed and exponent form, lists empty and full, nested file lists.
func TestJSONLMatchesObjectMarshalling(t *testing.T) {
	names := []string{"", "plain name.mkv", `quote " and \ backslash`, "tab\tnewline\n", "<b>&amp;</b>",
		"ünïcødé 日本語", "line\u2028sep", "bad utf-8 \xff\xfe", "del \x7f", "ctl \x01",
		`\.`, " leading space", "\u00a0nbsp first", "a,b", "cr\rlf", `"`, "trailing space "}
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}
	var torrents []schema.Torrent
	var states []schema.State
	var catalog []schema.Catalog
	for i, n := range names {
		f := floats[i%len(floats)]
		tr := schema.Torrent{InfoHash: schema.Hash{byte(i), 0xff}, HashType: int8(1 + i%2), FetchedAt: int64(i) * 1_700_000_000_123,
			ServedBy: n, MetadataSize: int64(-i), Meta: schema.Meta{Name: &n, NameRaw: []byte(n), NameUTF8Valid: i%2 == 0,
				TotalSize: new(int64(i) << 40), Private: i%3 == 0}}
		if i%2 == 1 {
			tr.Files = []schema.File{{Path: n, PathRaw: []byte(n), Length: int64(i)}, {Path: "b", Length: 0}}
		}
		torrents = append(torrents, tr)
		st := schema.State{InfoHash: tr.InfoHash, HashType: tr.HashType, FirstSeen: int64(i), LastSeen: int64(i) * 86_400_123,
			SeenCount: int64(i) * 1e12, LastSource: n, Activity: f, MetadataStatus: "failed", Attempts: int32(i), LastFailure: n,
			NextRetry: int64(i) * 1000, LeaseID: n, Tier: "cold", BackoffStep: -1, BadMetadata: 2, Reactivated: int64(i)}
		switch i % 3 {
		case 0:
			st.InfoHashV2 = bytes.Repeat([]byte{byte(i)}, 32)
			st.AvoidPeers = []string{"127.0.0.1:1", n}
		case 1:
			st.InfoHashV2, st.AvoidPeers = []byte{}, []string{} // empty, not nil
		}
		states = append(states, st)
		catalog = append(catalog, schema.Catalog{InfoHash: st.InfoHash, Activity: f, Name: &n, Files: tr.Files, LastFailure: n})
	}
	for _, f := range floats {
		states = append(states, schema.State{Activity: f}, schema.State{Activity: -f})
	}
	check := func(name, got, want string) {
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%s: line %d:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: %d bytes, want %d", name, len(got), len(want))
		}
	}
	got, e := fastJSONL(t, torrents)
	check("torrents", got, objectJSONL(t, e, torrents))
	gotS, es := fastJSONL(t, states)
	check("state", gotS, objectJSONL(t, es, states))
	gotC, ec := fastJSONL(t, catalog)
	check("catalog", gotC, objectJSONL(t, ec, catalog))
	check("torrents csv", fastCSV(t, torrents), recordsCSV(t, torrents))
	check("state csv", fastCSV(t, states), recordsCSV(t, states))
	check("catalog csv", fastCSV(t, catalog), recordsCSV(t, catalog))
	check("empty csv", fastCSV[schema.State](t, nil), recordsCSV[schema.State](t, nil))
}

// TestJSONLRefusesNaN: JSON has no NaN; the row is refused, naming the
// column, as encoding/json refused it.
func TestJSONLRefusesNaN(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		var b bytes.Buffer
		err := NewJSONL[schema.State](&b).Write([]schema.State{{Activity: f}})
		if err == nil || !strings.Contains(err.Error(), "activity") || !strings.Contains(err.Error(), "unsupported value") {
			t.Errorf("activity %v: error %v, want one naming the column and the unsupported value", f, err)
		}
	}
}

// FuzzJSONL compares writeJSON with Object marshalling, and the CSV
// writer with encoding/csv records, on arbitrary strings, bytes, numbers
// and timestamps.
func FuzzJSONL(f *testing.F) {
	f.Add("name", []byte("raw"), 1.5, int64(1700000000123), int64(3), true)
	f.Add("<&>\u2028\xff", []byte{}, 1e-7, int64(-1), int64(0), false)
	f.Fuzz(func(t *testing.T, s string, raw []byte, x float64, ms, n int64, flag bool) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return // refused by both (TestJSONLRefusesNaN)
		}
		rows := []schema.Torrent{{FetchedAt: ms, ServedBy: s, MetadataSize: n, Meta: schema.Meta{Name: &s, NameRaw: raw,
			NameUTF8Valid: flag, TotalSize: &n, Files: []schema.File{{Path: s, PathRaw: raw, Length: n}}}}}
		got, e := fastJSONL(t, rows)
		if want := objectJSONL(t, e, rows); got != want {
			t.Fatalf("torrent:\n got %s\nwant %s", got, want)
		}
		states := []schema.State{{LastSource: s, Activity: x, LastSeen: ms, SeenCount: n, InfoHashV2: raw, AvoidPeers: []string{s}}}
		gotS, es := fastJSONL(t, states)
		if want := objectJSONL(t, es, states); gotS != want {
			t.Fatalf("state:\n got %s\nwant %s", gotS, want)
		}
		if got, want := fastCSV(t, rows), recordsCSV(t, rows); got != want {
			t.Fatalf("torrent csv:\n got %q\nwant %q", got, want)
		}
		if got, want := fastCSV(t, states), recordsCSV(t, states); got != want {
			t.Fatalf("state csv:\n got %q\nwant %q", got, want)
		}
	})
}

// TestAppendTimeMatchesTimeFormat checks the civil-date arithmetic
// against time.Format: the epoch and the millisecond before it, leap days
// and century years, the ends of years 0000 and 9999 (and past them,
// which fall back to time.Format), and random instants over ±12000 years.
func TestAppendTimeMatchesTimeFormat(t *testing.T) {
	at := func(y int, m time.Month, d, h, mi, s, ms int) int64 {
		return time.Date(y, m, d, h, mi, s, ms*1e6, time.UTC).UnixMilli()
	}
	cases := []int64{0, -1, 1, 999, 1000, 86_399_999, 86_400_000, -86_400_000, -86_400_001,
		at(2000, 2, 29, 23, 59, 59, 999), at(1900, 2, 28, 0, 0, 0, 0), at(1900, 3, 1, 0, 0, 0, 0),
		at(2100, 2, 28, 12, 0, 0, 1), at(2024, 12, 31, 23, 59, 59, 999), at(1969, 12, 31, 23, 59, 59, 999),
		at(0, 1, 1, 0, 0, 0, 0), at(0, 1, 1, 0, 0, 0, 0) - 1, at(-1, 12, 31, 0, 0, 0, 0),
		at(9999, 12, 31, 23, 59, 59, 999), at(10000, 1, 1, 0, 0, 0, 0), at(1600, 2, 29, 1, 2, 3, 4),
		math.MaxInt64 / 1_000_000, math.MinInt64 / 1_000_000}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200_000 {
		cases = append(cases, rng.Int64N(2*380_000_000_000_000)-380_000_000_000_000)
	}
	for _, ms := range cases {
		want := time.UnixMilli(ms).UTC().Format(timeLayout)
		if got := Time(ms); got != want {
			t.Fatalf("Time(%d) = %s, want %s", ms, got, want)
		}
	}
}

// TestTimeOutsideRFC3339: outside years 0000-9999, which RFC 3339 alone
// has, a time is written as DuckDB's TIMESTAMPTZ reads it back (more year
// digits, or a minus sign: tools/duckcheck reads these through --describe's
// calls), and past DuckDB's range, where one value would fail the whole
// file, as infinity or -infinity; in csv and jsonl alike.
func TestTimeOutsideRFC3339(t *testing.T) {
	at := func(y int) int64 { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() }
	tests := []struct {
		name string
		ms   int64
		want string
	}{
		{"year 9999", at(10000) - 1, "9999-12-31T23:59:59.999Z"},
		{"year 10000", at(10000), "10000-01-01T00:00:00.000Z"},
		{"year -1", at(0) - 1, "-0001-12-31T23:59:59.999Z"},
		{"DuckDB's last", duckMaxMs, "294247-01-10T04:00:54.775Z"},
		{"past DuckDB's last", duckMaxMs + 1, "infinity"},
		{"the last int64", math.MaxInt64, "infinity"},
		{"DuckDB's first", duckMinMs, "-290308-12-22T00:00:00.000Z"},
		{"before DuckDB's first", duckMinMs - 1, "-infinity"},
		{"the first int64", math.MinInt64, "-infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Time(tt.ms); got != tt.want {
				t.Errorf("Time(%d) = %s, want %s", tt.ms, got, tt.want)
			}
			rows := []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: tt.ms, LastAt: 1}}
			var csv, jsonl bytes.Buffer
			if err := NewCSV[schema.PeerPenalty](&csv).Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := NewJSONL[schema.PeerPenalty](&jsonl).Write(rows); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(csv.String(), ","+tt.want+",") || !strings.Contains(jsonl.String(), `"until":"`+tt.want+`"`) {
				t.Errorf("until %d: csv %q, jsonl %q; want %s in each", tt.ms, csv.String(), jsonl.String(), tt.want)
			}
		})
	}
}

// TestFloatsKeepAFraction: a float column's whole numbers are written
// with a fraction (1.0), in JSON Lines and CSV alike, so that a reader
// guessing types from a sample of them (DuckDB, Elasticsearch) takes the
// column for floating point; other values as before.
func TestFloatsKeepAFraction(t *testing.T) {
	for _, tc := range []struct {
		x         float64
		json, csv string
	}{
		{1, "1.0", "1.0"},
		{0, "0.0", "0.0"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{-3, "-3.0", "-3.0"},
		{1e20, "100000000000000000000.0", "1e+20"},
		{1e6, "1000000.0", "1e+06"},
		{1.5, "1.5", "1.5"},
		{1e21, "1e+21", "1e+21"},
		{1e-7, "1e-7", "1e-07"},
	} {
		var j, c bytes.Buffer
		if err := NewJSONL[schema.State](&j).Write([]schema.State{{Activity: tc.x}}); err != nil {
			t.Fatal(err)
		}
		e := NewCSV[schema.State](&c)
		if err := e.Write([]schema.State{{Activity: tc.x}}); err != nil {
			t.Fatal(err)
		}
		if want := `"activity":` + tc.json + `,`; !strings.Contains(j.String(), want) {
			t.Errorf("activity %v: JSON %s lacks %s", tc.x, strings.TrimSpace(j.String()), want)
		}
		recs, err := csv.NewReader(&c).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("activity %v: CSV %q: %v", tc.x, c.String(), err)
		}
		col := slices.Index(recs[0], "activity")
		if got := recs[1][col]; got != tc.csv {
			t.Errorf("activity %v: CSV cell %s, want %s", tc.x, got, tc.csv)
		}
	}
}
