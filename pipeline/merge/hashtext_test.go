package merge

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// bytesHashRow is a no_peers result whose info_hash is bytes of any
// length: a BLOB, Arrow's binary.
type bytesHashRow struct {
	InfoHash    []byte `parquet:"info_hash"`
	HashType    int8   `parquet:"hash_type,int(8)"`
	Attempt     int32  `parquet:"attempt"`
	AttemptedAt int64  `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome     string `parquet:"outcome"`
	PeersFound  int32  `parquet:"peers_found"`
	PeersTried  int32  `parquet:"peers_tried"`
}

// TestInfoHashTextRule: merge reads a results info_hash by the rule dedup
// and fetch read one by (textenc.HashValue), in both readers: text
// (VARCHAR, utf8) is 40 hex digits, bytes (BLOB, binary) the hash's 20
// bytes, never the other way. merge took 20 characters of text as the
// hash's bytes (a hash nobody wrote) and 40 bytes of a BLOB as hex, where
// dedup and fetch refuse both. A result keys a v2 hash by its first 20
// bytes: 64 digits or 32 bytes are refused too. Each refusal is bad input
// naming the row, exit 2.
func TestInfoHashTextRule(t *testing.T) {
	const at = int64(1767225600123)
	h := hashAt(0x53, 1)
	full := sha256.Sum256([]byte("v2"))
	text := func(v string) func(t *testing.T) map[string]string {
		return func(t *testing.T) map[string]string {
			return writeBoth(t, []textHashRow{{InfoHash: v, HashType: 1, Attempt: 1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers}})
		}
	}
	blob := func(v []byte) func(t *testing.T) map[string]string {
		return func(t *testing.T) map[string]string {
			return writeBoth(t, []bytesHashRow{{InfoHash: v, HashType: 1, Attempt: 1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers}})
		}
	}
	const notHex = "(a %s column) is not a hex infohash (40 digits)"
	for _, tt := range []struct {
		name   string
		inputs func(t *testing.T) map[string]string
		err    string // "": read as hash h; else the end of the error, %s the column's text type
	}{
		{"text, 40 hex digits", text(hex.EncodeToString(h[:])), ""},
		{"text, 40 upper-case hex digits", text(strings.ToUpper(hex.EncodeToString(h[:]))), ""},
		{"text, 20 characters", text(string(h[:])), ": row 1: info_hash " + schema.Quote(string(h[:])) + " " + notHex},
		{"text, 20 letters", text("abcdefghij0123456789"), `: row 1: info_hash "abcdefghij0123456789" ` + notHex},
		{"text, 64 hex digits", text(hex.EncodeToString(full[:])), `"... ` + notHex},
		{"bytes, 20", blob(h[:]), ""},
		{"bytes, 40 hex digits", blob([]byte(hex.EncodeToString(h[:]))), ": row 1: info_hash has 40 bytes, want 20"},
		{"bytes, 32", blob(full[:]), ": row 1: info_hash has 32 bytes, want 20"},
	} {
		for format, path := range tt.inputs(t) {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				got, _, err := readResults(input{name: path, path: path}, nil)
				if tt.err == "" {
					if err != nil || len(got) != 1 || got[0].InfoHash != h {
						t.Fatalf("read %d rows (%v), err %v; want hash %x", len(got), got, err, h)
					}
					return
				}
				want := strings.Replace(tt.err, "%s", map[string]string{"parquet": "STRING", "arrow": "utf8"}[format], 1)
				if err == nil || !strings.HasPrefix(err.Error(), "merge: "+path+": ") || !strings.HasSuffix(err.Error(), want) ||
					exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err = %v (exit %d, %d rows)\nwant merge: %s...%s (exit 2)", err, exitcode.Of(err), len(got), path, want)
				}
			})
		}
	}
}

// TestInfoHashStringView: an Arrow info_hash of string_view (Polars'
// text) is text, as utf8 is: 40 hex digits read as the hash, 20
// characters refused. rowio.ArrowTextType did not name it text: its hex
// was read as 40 bytes.
func TestInfoHashStringView(t *testing.T) {
	h := hashAt(0x54, 1)
	for _, tt := range []struct {
		name, v string
		err     string // "": read as h
	}{
		{"40 hex digits", hex.EncodeToString(h[:]), ""},
		{"20 characters", "abcdefghij0123456789", `: row 1: info_hash "abcdefghij0123456789" (a string_view column) is not a hex infohash (40 digits)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := arrow.NewSchema([]arrow.Field{
				{Name: "info_hash", Type: arrow.BinaryTypes.StringView},
				{Name: "hash_type", Type: arrow.PrimitiveTypes.Int8},
				{Name: "attempt", Type: arrow.PrimitiveTypes.Int32},
				{Name: "attempted_at", Type: arrow.FixedWidthTypes.Timestamp_ms},
				{Name: "outcome", Type: arrow.BinaryTypes.String},
				{Name: "peers_found", Type: arrow.PrimitiveTypes.Int32},
				{Name: "peers_tried", Type: arrow.PrimitiveTypes.Int32},
			}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, s)
			defer b.Release()
			b.Field(0).(*array.StringViewBuilder).Append(tt.v)
			b.Field(1).(*array.Int8Builder).Append(schema.HashV1)
			b.Field(2).(*array.Int32Builder).Append(1)
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1767225600123))
			b.Field(4).(*array.StringBuilder).Append(schema.OutcomeNoPeers)
			b.Field(5).(*array.Int32Builder).Append(0)
			b.Field(6).(*array.Int32Builder).Append(0)
			rec := b.NewRecord()
			defer rec.Release()
			path := filepath.Join(t.TempDir(), "results.arrows")
			if err := os.WriteFile(path, rowiotest.ArrowStream(t, rec), 0o644); err != nil {
				t.Fatal(err)
			}
			got, _, err := readResults(input{name: path, path: path}, nil)
			if tt.err == "" {
				if err != nil || len(got) != 1 || got[0].InfoHash != h {
					t.Fatalf("read %d rows, err %v; want hash %x", len(got), err, h)
				}
				return
			}
			if want := "merge: " + path + tt.err; err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d)\nwant %s (exit 2)", err, exitcode.Of(err), want)
			}
		})
	}
}
