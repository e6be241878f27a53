package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// typedRow is a no_peers result as numbers and bytes, written under a
// schema that types its columns (typedResultFile).
type typedRow struct {
	InfoHash    []byte `parquet:"info_hash"`
	HashType    int32  `parquet:"hash_type"`
	Attempt     int32  `parquet:"attempt"`
	AttemptedAt int64  `parquet:"attempted_at"`
	Outcome     string `parquet:"outcome"`
	PeersFound  int32  `parquet:"peers_found"`
	PeersTried  int32  `parquet:"peers_tried"`
	LookupMs    *int64 `parquet:"lookup_ms,optional"`
	NameRaw     []byte `parquet:"name_raw,optional"`
	InfoHashV2  []byte `parquet:"info_hash_v2,optional"`
}

// typedResultFile writes row as a results file whose columns are fetch's
// types, but for those in over.
func typedResultFile(t *testing.T, row typedRow, over map[string]parquet.Node) string {
	t.Helper()
	g := parquet.Group{
		"info_hash":    parquet.Leaf(parquet.FixedLenByteArrayType(20)),
		"hash_type":    parquet.Int(8),
		"attempt":      parquet.Int(32),
		"attempted_at": parquet.Timestamp(parquet.Millisecond),
		"outcome":      parquet.String(),
		"peers_found":  parquet.Int(32),
		"peers_tried":  parquet.Int(32),
		"lookup_ms":    parquet.Optional(parquet.Int(64)),
		"name_raw":     parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		"info_hash_v2": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
	}
	for k, n := range over {
		g[k] = n
	}
	path := filepath.Join(t.TempDir(), "results.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, parquet.NewSchema("results", g))
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResultLogicalTypes: a results column whose values merge would read
// with another meaning than its own is wrong schema, exit 2, one line
// naming the file, the column, its type and the type wanted: a DATE,
// TIME or DECIMAL(9,2) attempt (INT32s: a DATE's 19000 days was read as
// attempt 19000), a TIME or DECIMAL attempted_at, a TIMESTAMP or TIME
// lookup_ms (a time read as a duration), text for name_raw (its
// characters read as the bytes). They were accepted,
// their stored numbers or characters used. A column whose values read the
// same stays accepted, with its values: an INT16 or DECIMAL(9,0) attempt,
// a TIMESTAMP of micro- or nanoseconds for attempted_at (converted to
// ms), a plain INT64 one (epoch ms), a BLOB or ENUM outcome, text for
// info_hash_v2 (read as hex, as fetch reads it).
func TestResultLogicalTypes(t *testing.T) {
	const at = int64(1767225600123) // 2026-01-01T00:00:00.123Z
	h := hashAt(0x4c, 1)
	row := typedRow{InfoHash: h[:], HashType: 1, Attempt: 3, AttemptedAt: at, Outcome: schema.OutcomeNoPeers,
		LookupMs: new(int64(250)), NameRaw: []byte("n"), InfoHashV2: nil}
	us, ns := row, row
	us.AttemptedAt, ns.AttemptedAt = at*1000, at*1000_000
	opt := parquet.Optional
	for _, tt := range []struct {
		name string
		row  typedRow
		over map[string]parquet.Node
		err  string // "": read, as want
		want typedRow
	}{
		{"DATE attempt", row, map[string]parquet.Node{"attempt": parquet.Date()},
			`column "attempt" is DATE, want an integer (INT32)`, row},
		{"TIME attempt", row, map[string]parquet.Node{"attempt": parquet.Time(parquet.Millisecond)},
			`column "attempt" is TIME(isAdjustedToUTC=true,unit=MILLIS), want an integer (INT32)`, row},
		{"DECIMAL(9,2) attempt", row, map[string]parquet.Node{"attempt": parquet.Decimal(2, 9, parquet.Int32Type)},
			`column "attempt" is DECIMAL(9,2), want an integer (INT32)`, row},
		{"TIME attempted_at", row, map[string]parquet.Node{"attempted_at": parquet.Time(parquet.Microsecond)},
			`column "attempted_at" is TIME(isAdjustedToUTC=true,unit=MICROS), want a TIMESTAMP or an INT64 (epoch ms)`, row},
		{"DECIMAL(18,3) attempted_at", row, map[string]parquet.Node{"attempted_at": parquet.Decimal(3, 18, parquet.Int64Type)},
			`column "attempted_at" is DECIMAL(18,3), want a TIMESTAMP or an INT64 (epoch ms)`, row},
		{"TIMESTAMP lookup_ms", row, map[string]parquet.Node{"lookup_ms": opt(parquet.Timestamp(parquet.Millisecond))},
			`column "lookup_ms" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS), want an integer (INT64)`, row},
		{"TIME lookup_ms", row, map[string]parquet.Node{"lookup_ms": opt(parquet.Time(parquet.Microsecond))},
			`column "lookup_ms" is TIME(isAdjustedToUTC=true,unit=MICROS), want an integer (INT64)`, row},
		{"STRING name_raw", row, map[string]parquet.Node{"name_raw": opt(parquet.String())},
			`column "name_raw" is STRING, want bytes (BYTE_ARRAY)`, row},
		{"STRING info_hash_v2", row, map[string]parquet.Node{"info_hash_v2": opt(parquet.String())}, "", row}, // hex (TestReadersAgree)
		{"STRING name_raw, BLOB info_hash", row, map[string]parquet.Node{"name_raw": opt(parquet.String()),
			"info_hash": parquet.Leaf(parquet.ByteArrayType)}, `column "name_raw" is STRING, want bytes (BYTE_ARRAY)`, row},
		{"INT16 attempt", row, map[string]parquet.Node{"attempt": parquet.Int(16)}, "", row},
		{"DECIMAL(9,0) attempt", row, map[string]parquet.Node{"attempt": parquet.Decimal(0, 9, parquet.Int32Type)}, "", row},
		{"TIMESTAMP(us) attempted_at", us, map[string]parquet.Node{"attempted_at": parquet.Timestamp(parquet.Microsecond)}, "", row},
		{"TIMESTAMP(ns) attempted_at", ns, map[string]parquet.Node{"attempted_at": parquet.Timestamp(parquet.Nanosecond)}, "", row},
		{"INT64 attempted_at", row, map[string]parquet.Node{"attempted_at": parquet.Int(64)}, "", row},
		{"BLOB outcome", row, map[string]parquet.Node{"outcome": parquet.Leaf(parquet.ByteArrayType)}, "", row},
		{"ENUM outcome", row, map[string]parquet.Node{"outcome": parquet.Enum()}, "", row},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := typedResultFile(t, tt.row, tt.over)
			got, _, err := readResults(input{name: path, path: path}, nil)
			if tt.err != "" {
				want := "merge: " + path + ": wrong schema: " + tt.err
				if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %v (exit %d, rows %+v)\nwant %q (exit 2)", err, exitcode.Of(err), got, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d rows, want 1", len(got))
			}
			r, w := got[0].Result, tt.want
			if r.InfoHash != h || r.Attempt != w.Attempt || r.AttemptedAt != w.AttemptedAt || r.Outcome != w.Outcome ||
				(r.LookupMs == nil) != (w.LookupMs == nil) || (r.LookupMs != nil && *r.LookupMs != *w.LookupMs) {
				t.Fatalf("read attempt %d at %d, outcome %q, lookup_ms %v; want %d at %d, %q, %v",
					r.Attempt, r.AttemptedAt, r.Outcome, r.LookupMs, w.Attempt, w.AttemptedAt, w.Outcome, w.LookupMs)
			}
		})
	}
}
