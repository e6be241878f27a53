package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// nullColRow is a no_peers result with a lookup_ms and a lease_id, as a
// pyarrow table holds it; the column of the case is written all null.
type nullColRow struct {
	InfoHash    []byte `parquet:"info_hash"`
	Attempt     int32  `parquet:"attempt"`
	AttemptedAt int64  `parquet:"attempted_at"`
	Outcome     string `parquet:"outcome"`
	LeaseID     string `parquet:"lease_id,optional"`
	LookupMs    *int64 `parquet:"lookup_ms,optional"`
}

// nullColumnFile writes rows under fetch's types (a BYTE_ARRAY info_hash
// when blob), but for column null, of Parquet's NULL logical type (all
// null, stored as an INT32 with no values: pyarrow's null type).
func nullColumnFile(t *testing.T, rows []nullColRow, null string, blob bool) string {
	t.Helper()
	g := parquet.Group{
		"info_hash":    parquet.Leaf(parquet.FixedLenByteArrayType(20)),
		"hash_type":    parquet.Int(8),
		"attempt":      parquet.Int(32),
		"attempted_at": parquet.Timestamp(parquet.Millisecond),
		"outcome":      parquet.String(),
		"peers_found":  parquet.Int(32),
		"peers_tried":  parquet.Int(32),
		"lease_id":     parquet.Optional(parquet.String()),
		"lookup_ms":    parquet.Optional(parquet.Int(64)),
	}
	if blob {
		g["info_hash"] = parquet.Leaf(parquet.ByteArrayType)
	}
	g[null] = parquet.Optional(parquet.Leaf(parquet.NullType))
	path := filepath.Join(t.TempDir(), "results.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewWriter(f, parquet.NewSchema("results", g))
	for _, r := range rows {
		switch null { // the null column's field holds nothing to write
		case "attempt":
			r.Attempt = 0
		case "outcome":
			r.Outcome = ""
		case "lease_id":
			r.LeaseID = ""
		case "lookup_ms":
			r.LookupMs = nil
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNullTypedColumns: a results column of Parquet's NULL logical type
// (all null: pyarrow writes an all-null column so) reads as nulls into a
// field that may be null, in both of merge's Parquet readers (fetch's
// FIXED_LEN_BYTE_ARRAY info_hash, a BLOB one), the other columns read as
// written: an all-null lookup_ms, lease_id, info_hash_v2, name_raw,
// retry_after, or list (peer_failures, files: no elements). It was wrong
// schema, oddly said ("is NULL stored as INT32, want a NULL (Type(?))").
// For a required field (attempt, outcome) it is wrong schema in one line
// naming the column and what it wants, exit 2.
func TestNullTypedColumns(t *testing.T) {
	const at = int64(1767225600123)
	h1, h2 := hashAt(0x4d, 1), hashAt(0x4d, 2)
	rows := []nullColRow{
		{InfoHash: h1[:], Attempt: 2, AttemptedAt: at, Outcome: schema.OutcomeNoPeers, LeaseID: "L1", LookupMs: new(int64(40))},
		{InfoHash: h2[:], Attempt: 3, AttemptedAt: at + 1, Outcome: schema.OutcomeNoPeers, LeaseID: "L2", LookupMs: new(int64(50))},
	}
	for _, tt := range []struct {
		column string
		err    string // "": read
	}{
		{"lookup_ms", ""},
		{"lease_id", ""},
		{"info_hash_v2", ""},
		{"name_raw", ""},
		{"retry_after", ""},
		{"peer_failures", ""},
		{"files", ""},
		{"attempt", `column "attempt" is NULL (no values), want an integer (INT32)`},
		{"outcome", `column "outcome" is NULL (no values), want text (STRING)`},
	} {
		for _, blob := range []bool{false, true} {
			t.Run(tt.column+map[bool]string{false: "", true: "/BLOB info_hash"}[blob], func(t *testing.T) {
				path := nullColumnFile(t, rows, tt.column, blob)
				got, _, err := readResults(input{name: path, path: path}, nil)
				if tt.err != "" {
					want := "merge: " + path + ": wrong schema: " + tt.err
					if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
						t.Fatalf("got %v (exit %d)\nwant %q (exit 2)", err, exitcode.Of(err), want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(rows) {
					t.Fatalf("%d rows, want %d", len(got), len(rows))
				}
				for i, w := range rows {
					r := got[i].Result
					wantLease, wantLookup := w.LeaseID, w.LookupMs
					switch tt.column {
					case "lease_id":
						wantLease = ""
					case "lookup_ms":
						wantLookup = nil
					}
					if r.InfoHash != schema.Hash(w.InfoHash) || r.Attempt != w.Attempt || r.AttemptedAt != w.AttemptedAt ||
						r.Outcome != w.Outcome || r.LeaseID != wantLease || (r.LookupMs == nil) != (wantLookup == nil) ||
						(r.LookupMs != nil && *r.LookupMs != *wantLookup) {
						t.Errorf("row %d: %x attempt %d at %d %q lease %q lookup_ms %v; want %x %d %d %q %q %v", i+1,
							r.InfoHash, r.Attempt, r.AttemptedAt, r.Outcome, r.LeaseID, r.LookupMs,
							w.InfoHash, w.Attempt, w.AttemptedAt, w.Outcome, wantLease, wantLookup)
					}
					if r.InfoHashV2 != nil || r.NameRaw != nil || r.RetryAfter != 0 || len(r.PeerFailures) != 0 || r.Files != nil {
						t.Errorf("row %d: v2 %x, name_raw %q, retry_after %d, peer_failures %v, files %v; want all null",
							i+1, r.InfoHashV2, r.NameRaw, r.RetryAfter, r.PeerFailures, r.Files)
					}
				}
			})
		}
	}
}

// TestNullTypedColumnWithValues: a results column of Parquet's NULL
// logical type whose pages hold values that are not null (a footer edit
// over fetch's lookup_ms, lease_id or attempt) is bad input, exit 2, in
// one line naming the file and the column, in both of merge's Parquet
// readers: each such value was read as 0 (lookup_ms 0, attempt 0) or "".
// An all-null one reads as nulls (TestNullTypedColumns).
func TestNullTypedColumnWithValues(t *testing.T) {
	const at = int64(1767225600123)
	h1, h2 := hashAt(0x4e, 1), hashAt(0x4e, 2)
	rows := []nullColRow{
		{InfoHash: h1[:], Attempt: 2, AttemptedAt: at, Outcome: schema.OutcomeNoPeers, LeaseID: "L1", LookupMs: new(int64(40))},
		{InfoHash: h2[:], Attempt: 3, AttemptedAt: at + 1, Outcome: schema.OutcomeNoPeers, LeaseID: "L2", LookupMs: new(int64(50))},
	}
	for _, column := range []string{"lookup_ms", "lease_id", "attempt"} {
		for _, blob := range []bool{false, true} {
			t.Run(column+map[bool]string{false: "", true: "/BLOB info_hash"}[blob], func(t *testing.T) {
				plain := nullColumnFile(t, rows, "none", blob) // "none": no column of that name, all written
				b, err := os.ReadFile(plain)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "results.parquet")
				if err := os.WriteFile(path, rowiotest.EditFooter(t, b, rowiotest.NullType(t, column)), 0o644); err != nil {
					t.Fatal(err)
				}
				got, _, err := readResults(input{name: path, path: path}, nil)
				head := "merge: " + path + `: corrupt Parquet: row group 0 column "` + column + `": page at offset `
				tail := "holds 2 values that are not null in a column of the NULL type (all null)"
				if err == nil || !strings.HasPrefix(err.Error(), head) || !strings.HasSuffix(err.Error(), tail) ||
					exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %v (exit %d, %d rows)\nwant one line %q...%q, exit 2", err, exitcode.Of(err), len(got), head, tail)
				}
			})
		}
	}
}
