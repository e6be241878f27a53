package textenc

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// ledgerRow has the columns of export's LedgerEntry (pipeline/export
// whole.go), the one row type export writes as text that schema lacks.
type ledgerRow struct {
	ID        string `parquet:"id"`
	Name      string `parquet:"name"`
	Rows      int64  `parquet:"rows"`
	AppliedAt int64  `parquet:"applied_at,timestamp(millisecond)"`
}

// oddRow has kinds of field that no schema row type has (an optional
// array or float, pointers to other kinds than string, int and bool,
// optional lists, other integer widths), each written as the
// reflection-based encoder wrote them.
type oddRow struct {
	Fixed     [4]byte   `parquet:"fixed"`
	OptFixed  [4]byte   `parquet:"opt_fixed,optional"`
	PtrFixed  *[2]byte  `parquet:"ptr_fixed,optional"`
	OptFloat  float64   `parquet:"opt_float,optional"`
	PtrFloat  *float64  `parquet:"ptr_float,optional"`
	OptBool   bool      `parquet:"opt_bool,optional"`
	OptInt8   int8      `parquet:"opt_int8,optional"`
	PtrInt8   *int8     `parquet:"ptr_int8,optional"`
	OptInt32  int32     `parquet:"opt_int32,optional"`
	PtrTime   *int64    `parquet:"ptr_time,optional,timestamp(millisecond)"`
	PtrBytes  *[]byte   `parquet:"ptr_bytes,optional"`
	OptString string    `parquet:"opt_string,optional"`
	OptList   []string  `parquet:"opt_list,optional,list"`
	PtrList   *[]string `parquet:"ptr_list,optional,list"`
	OptStruct []oddElem `parquet:"opt_struct,optional,list"`
	Int16     int16     `parquet:"int16"`
	Ints      []int64   `parquet:"ints,list"`
}

type oddElem struct {
	OK   bool   `parquet:"ok"`
	Tiny int8   `parquet:"tiny,optional"`
	At   *int64 `parquet:"at,optional,timestamp(millisecond)"`
	Raw  []byte `parquet:"raw"`
}

// TestGolden: the CSV and JSON Lines the encoders write of each row type
// export writes as text (and of oddRow) are byte for byte their files
// under testdata/golden/, recorded from the reflection-based encoders
// (go test ./formats/textenc -run TestGolden -update rewrites them).
// es-bulk's documents (AppendJSON, without info_bytes and name_raw) are
// the .es files. The rows give every column values that differ from row
// to row and, where it is nullable, nulls and known zero values, so a
// value written wrong, in the wrong column or as null changes the output.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		csv  func(t *testing.T) []byte
		json func(t *testing.T, skip ...string) []byte
		es   bool // the row type goes to es-bulk too
	}{
		{"state", goldenCSV(goldenState()), goldenJSONL(goldenState()), true},
		{"torrent", goldenCSV(goldenTorrent()), goldenJSONL(goldenTorrent()), true},
		{"catalog", goldenCSV(goldenCatalog()), goldenJSONL(goldenCatalog()), true},
		{"lease", goldenCSV(textRows[schema.Lease]()), goldenJSONL(textRows[schema.Lease]()), false},
		{"peer_penalty", goldenCSV(goldenPenalty()), goldenJSONL(goldenPenalty()), false},
		{"ledger", goldenCSV(textRows[ledgerRow]()), goldenJSONL(textRows[ledgerRow]()), false},
		{"odd", goldenCSV(goldenOdd()), goldenJSONL(goldenOdd()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden")
			c := tc.csv(t)
			checkVariedCSV(t, c)
			goldentest.Check(t, filepath.Join(dir, tc.name+".csv"), c, *update)
			j := tc.json(t)
			checkVariedJSON(t, j)
			goldentest.Check(t, filepath.Join(dir, tc.name+".jsonl"), j, *update)
			if tc.es {
				es := tc.json(t, "info_bytes", "name_raw")
				goldentest.Check(t, filepath.Join(dir, tc.name+".es"), es, *update)
			}
		})
	}
}

// goldenCSV writes rows as CSV, in two Writes (the header once).
func goldenCSV[T any](rows []T) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		t.Helper()
		var b bytes.Buffer
		e := NewCSV[T](&b)
		half := len(rows) / 2
		for _, part := range [][]T{rows[:half], rows[half:]} {
			if err := e.Write(part); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

// goldenJSONL writes rows as JSON Lines without the columns skip names:
// with Write if skip is empty, else a row at a time with AppendJSON, as
// es-bulk does.
func goldenJSONL[T any](rows []T) func(t *testing.T, skip ...string) []byte {
	return func(t *testing.T, skip ...string) []byte {
		t.Helper()
		var b bytes.Buffer
		e := NewJSONL[T](&b, skip...)
		if len(skip) == 0 {
			if err := e.Write(rows); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		var line []byte
		for i := range rows {
			var err error
			if line, err = e.AppendJSON(line[:0], &rows[i]); err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		return b.Bytes()
	}
}

// checkVariedJSON fails t unless every column of the JSON Lines has two
// distinct values (null one of them): rows that would hide a field
// written wrong are no test of it.
func checkVariedJSON(t *testing.T, out []byte) {
	t.Helper()
	seen := map[string]map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for k, v := range m {
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][string(v)] = true
		}
	}
	for k, vs := range seen {
		if len(vs) < 2 {
			t.Errorf("JSON column %s has %d distinct values", k, len(vs))
		}
	}
}

// checkVariedCSV is checkVariedJSON for CSV.
func checkVariedCSV(t *testing.T, out []byte) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for j, name := range recs[0] {
		vs := map[string]bool{}
		for _, r := range recs[1:] {
			vs[r[j]] = true
		}
		if len(vs) < 2 {
			t.Errorf("CSV column %s has %d distinct values", name, len(vs))
		}
	}
}

// textRows are goldentest.Rows of T with strings of textString.
func textRows[T any]() []T { return goldentest.Rows[T](textString) }

// textTails make strings of some seeds need quoting or escaping: CSV's
// quotes (comma, quote, line breaks, a leading space), JSON's escapes
// (control characters, <, >, &, U+2028), non-UTF-8 bytes, non-ASCII.
var textTails = []string{"", ", \"q\" \\ <&>", "\xff\xfe\t\n\r\x01\u2028", " é 日本"}

// textString is goldentest.PlainText with a tail of textTails, and a
// leading space (CSV quotes it) for some seeds.
func textString(seed, k int) string {
	s := goldentest.PlainText(seed, k) + textTails[seed%len(textTails)]
	if seed%5 == 3 {
		s = " " + s
	}
	return s
}

// Times past RFC 3339's years, and past DuckDB's range (appendTime).
var oddTimes = []int64{253402300800000, -62135596800001, duckMaxMs, duckMaxMs + 1, duckMinMs, duckMinMs - 1,
	math.MaxInt64, math.MinInt64, -1}

// Floats in fixed and exponent form, signed zero, extremes.
var oddFloats = []float64{math.Copysign(0, -1), 1e21, 1e20, 1e-7, 1e-6, 0.1, 1, math.MaxFloat64,
	math.SmallestNonzeroFloat64, -123456789.125}

// goldenState adds to textRows states as dedup and merge make them (a v2
// hash with its full hash, a failed hash leased for a retry, peers), and
// times and floats at the edges, odd strings in lists.
func goldenState() []schema.State {
	rows := textRows[schema.State]()
	v2 := bytes.Repeat([]byte{0x80, 0x23, 0x45, 0x67}, 8)
	rows = append(rows,
		schema.State{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: schema.HashV2, FirstSeen: 1767322800000,
			LastSeen: 1767322800000, SeenCount: 1, LastSource: schema.SourceImport, Activity: 1,
			MetadataStatus: schema.StatusNew, Tier: schema.TierHot, FirstSource: schema.SourceImport,
			InfoHashV2Source: schema.SourceImport},
		schema.State{InfoHash: schema.Hash{0xff, 0x23}, HashType: schema.HashV1, FirstSeen: 1767322800000,
			LastSeen: 1767325200000, SeenCount: 3, LastSource: schema.SourceGetPeers, Activity: 2.25,
			MetadataStatus: schema.StatusFailed, Attempts: 2, LastAttempt: 1767328200000, LastFailure: schema.OutcomeNoPeers,
			NextRetry: 1767331800000, LeaseID: "lease-1", LeaseUntil: 1767330000000, Tier: schema.TierCold, BackoffStep: 1,
			AvoidPeers: []string{"192.0.2.1:6881", `say "hi" \ & <x>`, "tab\tnl\n\xff"},
			Peers:      []string{"[2001:db8::2]:6881", "198.51.100.7:51413"}, LastFailureAt: 1767328200000},
	)
	for i, ms := range oddTimes {
		rows = append(rows, schema.State{InfoHash: schema.Hash{0x10, byte(i)}, FirstSeen: ms, LastSeen: -ms,
			LastAttempt: ms, NextRetry: ms, LeaseUntil: ms, Reactivated: ms, LastFailureAt: ms, PeersAt: ms,
			Activity: oddFloats[i%len(oddFloats)]})
	}
	for i, x := range oddFloats {
		rows = append(rows, schema.State{InfoHash: schema.Hash{0x20, byte(i)}, Activity: -x, LastSource: `\.`})
	}
	return rows
}

// goldenTorrent adds to textRows torrents as merge makes them: a
// two-file torrent with names that need quoting, a private one with an
// empty name, one whose name and path are not UTF-8.
func goldenTorrent() []schema.Torrent {
	return append(textRows[schema.Torrent](),
		schema.Torrent{InfoHash: schema.Hash{0x01, 0x23}, HashType: schema.HashV1, FetchedAt: 1767328200000,
			ServedBy: "127.0.0.1:6881", MetadataSize: 160, Meta: schema.Meta{Name: new("Ünïcode, \"quoted\" <&> name"),
				NameRaw: []byte("Ünïcode, \"quoted\" <&> name"), NameUTF8Valid: true, TotalSize: new(int64(12)),
				PieceLength: new(int64(16384)), FileCount: new(int32(2)),
				Files: []schema.File{{Path: "dir/a,b.txt", PathRaw: []byte("dir/a,b.txt"), Length: 5},
					{Path: "c \"d\"\\e.bin", PathRaw: []byte("c \"d\"\\e.bin"), Length: 7}},
				InfoBytes: []byte("d4:name3:abce")}},
		schema.Torrent{InfoHash: schema.Hash{0x80, 0x23}, HashType: schema.HashV2, FetchedAt: 1767328200001,
			MetadataSize: 80, Meta: schema.Meta{Name: new(""), NameRaw: []byte{}, NameUTF8Valid: true,
				TotalSize: new(int64(0)), PieceLength: new(int64(32768)), FileCount: new(int32(1)),
				Files: []schema.File{}, Private: true}},
		schema.Torrent{InfoHash: schema.Hash{0xfe}, HashType: schema.HashV1, FetchedAt: duckMaxMs + 5, MetadataSize: 90,
			Meta: schema.Meta{Name: new(" \xff\xfe\\.x"), NameRaw: []byte{0xff, 0xfe, 'x'}, TotalSize: new(int64(1 << 40)),
				FileCount: new(int32(1)), Files: []schema.File{{Path: "\xff\x01\u2028", PathRaw: []byte{0xff}, Length: 1 << 40}}}},
	)
}

// goldenCatalog adds to textRows a fetched v2 row, and one with a name
// that is `\.` (which CSV quotes).
func goldenCatalog() []schema.Catalog {
	v2 := bytes.Repeat([]byte{0x80, 0x23, 0x45, 0x67}, 8)
	return append(textRows[schema.Catalog](),
		schema.Catalog{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: schema.HashV2, Activity: -0.0,
			FetchedAt: -62135596800001, Name: new(`\.`), NameRaw: []byte(`\.`), NameUTF8Valid: new(false),
			Files: []schema.File{{Path: "<&>", PathRaw: []byte{}, Length: -1}}, Private: new(false)},
		schema.Catalog{InfoHash: schema.Hash{0x33}, Activity: math.Copysign(0, -1), LastFailure: "a\rb",
			ServedBy: "[::1]:1", MetadataSize: -5},
	)
}

// goldenPenalty adds penalties until times out of RFC 3339's years.
func goldenPenalty() []schema.PeerPenalty {
	rows := textRows[schema.PeerPenalty]()
	for i, ms := range oddTimes {
		rows = append(rows, schema.PeerPenalty{Addr: fmt.Sprintf("127.0.0.%d:1", i), Class: "rejected", Until: ms,
			Failures: int32(-i), LastAt: -ms})
	}
	return rows
}

// goldenOdd adds to textRows an oddRow with -0 in the optional float
// (null, as reflect's IsZero has it since Go 1.22) and its pointer, and
// a list of ints.
func goldenOdd() []oddRow {
	return append(textRows[oddRow](),
		oddRow{OptFloat: math.Copysign(0, -1), PtrFloat: new(math.Copysign(0, -1)), Fixed: [4]byte{1},
			OptString: "x", Ints: []int64{-1, 0, math.MaxInt64}})
}

// TestGoldenRefusesNaN: a NaN or infinite float, which JSON lacks, fails
// the JSON row, naming the column, a plain float column and a pointer
// one alike; CSV writes it as strconv does (NaN, +Inf, -Inf).
func TestGoldenRefusesNaN(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		str := strconv.FormatFloat(x, 'g', -1, 64)
		var b bytes.Buffer
		_, err := NewJSONL[oddRow](&b).AppendJSON(nil, &oddRow{PtrFloat: &x})
		if want := "textenc: ptr_float: json: unsupported value: " + str; err == nil || err.Error() != want {
			t.Errorf("ptr_float %v: error %v, want %s", x, err, want)
		}
		err = NewJSONL[schema.Catalog](&b).Write([]schema.Catalog{{Activity: x}})
		if want := "textenc: activity: json: unsupported value: " + str; err == nil || err.Error() != want {
			t.Errorf("activity %v: error %v, want %s", x, err, want)
		}
		var c bytes.Buffer
		if err := NewCSV[schema.State](&c).Write([]schema.State{{Activity: x}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.String(), ","+str+",") {
			t.Errorf("csv activity %v: %q lacks the cell %s", x, c.String(), str)
		}
	}
}
