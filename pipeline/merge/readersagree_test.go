package merge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// textHashRow is a result whose hash columns are hex text, as DuckDB's
// lower(hex(...)) VARCHAR or a pyarrow string column holds them.
type textHashRow struct {
	InfoHash    string `parquet:"info_hash"`
	InfoHashV2  string `parquet:"info_hash_v2,optional"`
	HashType    int8   `parquet:"hash_type,int(8)"`
	Attempt     int32  `parquet:"attempt"`
	AttemptedAt int64  `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome     string `parquet:"outcome"`
	PeersFound  int32  `parquet:"peers_found"`
	PeersTried  int32  `parquet:"peers_tried"`
	ServedBy    string `parquet:"served_by,optional"`
	InfoBytes   []byte `parquet:"info_bytes,optional"`
}

// blobTextRow is a result whose string columns are bytes (BLOB, Arrow's
// binary), as a tool that does not type its text writes them.
type blobTextRow struct {
	InfoHash     schema.Hash   `parquet:"info_hash"`
	HashType     int8          `parquet:"hash_type,int(8)"`
	Attempt      int32         `parquet:"attempt"`
	LeaseID      []byte        `parquet:"lease_id,optional"`
	AttemptedAt  int64         `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome      []byte        `parquet:"outcome"`
	Detail       []byte        `parquet:"detail,optional"`
	PeersFound   int32         `parquet:"peers_found"`
	PeersTried   int32         `parquet:"peers_tried"`
	PeerFailures []blobFailure `parquet:"peer_failures,list"`
}

type blobFailure struct {
	Addr  []byte `parquet:"addr"`
	Class []byte `parquet:"class"`
	At    int64  `parquet:"at,timestamp(millisecond)"`
}

// writeBoth writes rows as a Parquet file and as an Arrow IPC stream
// file, each of the types rowio gives T's fields.
func writeBoth[T any](t *testing.T, rows []T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	pq, ar := filepath.Join(dir, "results.parquet"), filepath.Join(dir, "results.arrows")
	w, err := rowio.Create[T](pq, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	aw := rowio.NewArrowWriter[T]("stream", &stream)
	if err := aw.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ar, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"parquet": pq, "arrow": ar}
}

// nullArrowStream is the results of rs (no_peers, no lease) as an Arrow
// stream whose lookup_ms and lease_id are of Arrow's null type (all
// null), as pyarrow types an all-null column.
func nullArrowStream(t *testing.T, rs []schema.Result) string {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: &arrow.FixedSizeBinaryType{ByteWidth: 20}},
		{Name: "hash_type", Type: arrow.PrimitiveTypes.Int8},
		{Name: "attempt", Type: arrow.PrimitiveTypes.Int32},
		{Name: "attempted_at", Type: arrow.FixedWidthTypes.Timestamp_ms},
		{Name: "outcome", Type: arrow.BinaryTypes.String},
		{Name: "peers_found", Type: arrow.PrimitiveTypes.Int32},
		{Name: "peers_tried", Type: arrow.PrimitiveTypes.Int32},
		{Name: "lookup_ms", Type: arrow.Null, Nullable: true},
		{Name: "lease_id", Type: arrow.Null, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for _, r := range rs {
		b.Field(0).(*array.FixedSizeBinaryBuilder).Append(r.InfoHash[:])
		b.Field(1).(*array.Int8Builder).Append(r.HashType)
		b.Field(2).(*array.Int32Builder).Append(r.Attempt)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.AttemptedAt))
		b.Field(4).(*array.StringBuilder).Append(r.Outcome)
		b.Field(5).(*array.Int32Builder).Append(r.PeersFound)
		b.Field(6).(*array.Int32Builder).Append(r.PeersTried)
		b.Field(7).AppendNull()
		b.Field(8).AppendNull()
	}
	rec := b.NewRecord()
	defer rec.Release()
	p := filepath.Join(t.TempDir(), "results.arrows")
	if err := os.WriteFile(p, rowiotest.ArrowStream(t, rec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadersAgree: merge's Parquet and Arrow readers take the same
// inputs and read the same values from them: string columns as bytes
// (BLOB, binary; peer_failures' too), info_hash as 40 hex digits of text
// (either case), info_hash_v2 as 64 (as fetch reads a jobs file's), an
// all-null column of Arrow's null type as nulls (Parquet's NULL:
// TestNullTypedColumns). Each reads what fetch's own results of those
// values read. The Arrow reader refused binary for text and text for
// info_hash ("want fixed_size_binary[20], got utf8"), and both refused a
// text info_hash_v2 ("is STRING, want bytes"). Text in info_hash_v2 that
// is not 64 hex digits is bad input, naming the row, in both.
func TestReadersAgree(t *testing.T) {
	const at = int64(1767225600123)
	info := []byte("d6:lengthi1e4:name2:v212:piece lengthi16384e6:pieces20:xxxxxxxxxxxxxxxxxxxxe")
	sum := sha256.Sum256(info)
	var v2 schema.Hash
	copy(v2[:], sum[:20])
	failed := hashAt(0x52, 1)
	okV2 := schema.Result{InfoHash: v2, InfoHashV2: sum[:], HashType: schema.HashV2, Attempt: 1, AttemptedAt: at,
		Outcome: schema.OutcomeOK, ServedBy: "127.0.0.1:1", ResultMeta: schema.ResultMeta{InfoBytes: info}}
	noPeers := schema.Result{InfoHash: failed, HashType: schema.HashV1, Attempt: 2, AttemptedAt: at + 1, Outcome: schema.OutcomeNoPeers}
	rejected := schema.Result{InfoHash: failed, HashType: schema.HashV1, Attempt: 3, LeaseID: "L7", AttemptedAt: at + 2,
		Outcome: schema.OutcomeRejected, Detail: "a & b", PeerFailures: []schema.PeerFailure{
			{Addr: "127.0.0.1:6881", Class: schema.OutcomeRejected, At: at + 2}, {Addr: "[::1]:7", Class: schema.OutcomeRejected, At: at + 3}}}
	badV2 := textHashRow{InfoHash: hex.EncodeToString(v2[:]), InfoHashV2: "v2 " + hex.EncodeToString(sum[:20]), HashType: 2,
		Attempt: 1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers}
	for _, tt := range []struct {
		name   string
		inputs func(t *testing.T) map[string]string
		want   []schema.Result
		err    string // "": read as want
	}{
		{"hex text hashes", func(t *testing.T) map[string]string {
			return writeBoth(t, []textHashRow{
				{InfoHash: strings.ToUpper(hex.EncodeToString(v2[:])), InfoHashV2: hex.EncodeToString(sum[:]), HashType: 2,
					Attempt: 1, AttemptedAt: at, Outcome: schema.OutcomeOK, ServedBy: "127.0.0.1:1", InfoBytes: info},
				{InfoHash: hex.EncodeToString(failed[:]), HashType: 1, Attempt: 2, AttemptedAt: at + 1, Outcome: schema.OutcomeNoPeers},
			})
		}, []schema.Result{okV2, noPeers}, ""},
		{"BLOB strings", func(t *testing.T) map[string]string {
			return writeBoth(t, []blobTextRow{{InfoHash: failed, HashType: 1, Attempt: 3, LeaseID: []byte("L7"), AttemptedAt: at + 2,
				Outcome: []byte(schema.OutcomeRejected), Detail: []byte("a & b"), PeerFailures: []blobFailure{
					{[]byte("127.0.0.1:6881"), []byte(schema.OutcomeRejected), at + 2}, {[]byte("[::1]:7"), []byte(schema.OutcomeRejected), at + 3}}}})
		}, []schema.Result{rejected}, ""},
		{"null-typed columns", func(t *testing.T) map[string]string {
			return map[string]string{"arrow": nullArrowStream(t, []schema.Result{noPeers})}
		}, []schema.Result{noPeers}, ""},
		{"info_hash_v2 not hex", func(t *testing.T) map[string]string { return writeBoth(t, []textHashRow{badV2}) },
			nil, `: row 1: info_hash_v2 "` + badV2.InfoHashV2 + `" (a %s column) is not a hex v2 hash (64 digits)`},
	} {
		for format, path := range tt.inputs(t) {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				got, _, err := readResults(input{name: path, path: path}, nil)
				if tt.err != "" {
					want := "merge: " + path + strings.Replace(tt.err, "%s", map[string]string{"parquet": "STRING", "arrow": "utf8"}[format], 1)
					if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
						t.Fatalf("err = %v (exit %d)\nwant %s (exit 2)", err, exitcode.Of(err), want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := readResults(input{name: "fetch's", path: writeResults(t, tt.want)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, rs := range [][]result{got, want} { // no column, no failures: nil or empty alike
					for i := range rs {
						if len(rs[i].PeerFailures) == 0 {
							rs[i].PeerFailures = nil
						}
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("read\n%+v\nwant (as fetch's own results read)\n%+v", got, want)
				}
			})
		}
	}
}
