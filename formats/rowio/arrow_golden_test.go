package rowio

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestArrowGolden: the Arrow IPC stream the writer makes of each row type
// that goes through it (export's tables; capture's, plan-retries' and
// fetch's streams) is byte for byte its file under testdata/arrowgolden/,
// recorded from the reflection-based writer before its appenders were
// resolved at plan time (go test ./formats/rowio -run TestArrowGolden
// -update rewrites them). One Write and WriteSeq of the same rows both
// write it. The rows (goldenRows) give every column values that differ
// from row to row, and every nullable column nulls, so a value appended
// wrong, to the wrong column, or as null changes the stream.
func TestArrowGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, seq bool) []byte
	}{
		{"state", goldenWriter(append(goldenRows[schema.State](), goldenStates()...))},
		{"torrent", goldenWriter(append(goldenRows[schema.Torrent](), goldenTorrents()...))},
		{"catalog", goldenWriter(goldenRows[schema.Catalog]())},
		{"lease", goldenWriter(goldenRows[schema.Lease]())},
		{"peer_penalty", goldenWriter(goldenRows[schema.PeerPenalty]())},
		{"observation", goldenWriter(goldenRows[schema.Observation]())},
		{"job", goldenWriter(goldenRows[schema.Job]())},
		{"result", goldenWriter(goldenRows[schema.Result]())},
		{"odd", goldenWriter(append(goldenRows[oddRow](), oddRow{OptFloat: math.Copysign(0, -1), Fixed: [4]byte{1}}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "arrowgolden", tc.name+".arrows")
			got := tc.write(t, false)
			checkVaried(t, got)
			if *update {
				goldentest.Check(t, golden, got, true)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) { // goldentest's line diff of binary would say little
				t.Errorf("output differs from %s (go test -update rewrites it): %s", golden, streamDiff(t, got, want))
			}
			if seq := tc.write(t, true); !bytes.Equal(seq, got) {
				t.Errorf("WriteSeq: %s", streamDiff(t, seq, got))
			}
		})
	}
}

// oddRow has the kinds of field the plan takes that no row type has (an
// optional array or float, pointers to other kinds than string, int and
// bool), each written as the reflection-based writer wrote them. Its last
// golden row has -0 in the optional float: null, as reflect's IsZero has
// it since Go 1.22.
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
	OptList   []string  `parquet:"opt_list,optional,list"`
	PtrList   *[]string `parquet:"ptr_list,optional,list"`
	OptStruct []oddElem `parquet:"opt_struct,optional,list"`
}

type oddElem struct {
	OK   bool   `parquet:"ok"`
	Tiny int8   `parquet:"tiny,optional"`
	At   *int64 `parquet:"at,optional,timestamp(millisecond)"`
}

// goldenWriter returns a function writing rows to an Arrow stream with
// one Write, or with WriteSeq.
func goldenWriter[T any](rows []T) func(t *testing.T, seq bool) []byte {
	return func(t *testing.T, seq bool) []byte {
		t.Helper()
		var b bytes.Buffer
		w := NewArrowWriter[T]("golden", &b)
		var err error
		if seq {
			err = w.WriteSeq(slices.Values(rows))
		} else {
			err = w.Write(rows)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

// goldenRows are goldentest.Rows of T, with plain strings.
func goldenRows[T any]() []T { return goldentest.Rows[T](goldentest.PlainText) }

// goldenStates are state rows as dedup and merge make them: a fetched v1
// hash with peers, a v2 hash with its full hash, a failed hash leased for
// a retry, a new hash never attempted.
func goldenStates() []schema.State {
	v2 := bytes.Repeat([]byte{0x80, 0x23, 0x45, 0x67}, 8)
	return []schema.State{
		{InfoHash: schema.Hash{0x01, 0x23}, HashType: schema.HashV1, FirstSeen: 1767322800000, LastSeen: 1767326400000,
			SeenCount: 2, LastSource: schema.SourceAnnouncePeer, Activity: 1.5, MetadataStatus: schema.StatusFetched,
			Attempts: 1, LastAttempt: 1767328200000, Tier: schema.TierHot, Peers: []string{"[2001:db8::2]:6881", "198.51.100.7:51413"},
			FirstSource: schema.SourceImport, PeersAt: 1767324600000},
		{InfoHash: schema.Hash(v2[:20]), InfoHashV2: v2, HashType: schema.HashV2, FirstSeen: 1767322800000,
			LastSeen: 1767322800000, SeenCount: 1, LastSource: schema.SourceImport, Activity: 1,
			MetadataStatus: schema.StatusNew, Tier: schema.TierHot, FirstSource: schema.SourceImport, InfoHashV2Source: schema.SourceImport},
		{InfoHash: schema.Hash{0xff, 0x23}, HashType: schema.HashV1, FirstSeen: 1767322800000, LastSeen: 1767325200000,
			SeenCount: 3, LastSource: schema.SourceGetPeers, Activity: 2.25, MetadataStatus: schema.StatusFailed, Attempts: 2,
			LastAttempt: 1767328200000, LastFailure: schema.OutcomeNoPeers, NextRetry: 1767331800000, LeaseID: "lease-1",
			LeaseUntil: 1767330000000, Tier: schema.TierCold, BackoffStep: 1, BadMetadata: 1, Reactivated: 1767325200000,
			AvoidPeers: []string{"192.0.2.1:6881"}, FirstSource: schema.SourceGetPeers, LastFailureAt: 1767328200000},
		{InfoHash: schema.Hash{0x42}, HashType: schema.HashV1, FirstSeen: 1, LastSeen: 1, SeenCount: 1,
			LastSource: schema.SourceSampleInfohashes, MetadataStatus: schema.StatusNew, Tier: schema.TierHot},
	}
}

// goldenTorrents are torrent rows as merge makes them: a two-file
// torrent, a single-file private one with an empty name, and one whose
// name is not UTF-8.
func goldenTorrents() []schema.Torrent {
	return []schema.Torrent{
		{InfoHash: schema.Hash{0x01, 0x23}, HashType: schema.HashV1, FetchedAt: 1767328200000, ServedBy: "127.0.0.1:6881",
			MetadataSize: 160, Meta: schema.Meta{Name: new("Ünïcode, \"quoted\" <&> name"), NameRaw: []byte("Ünïcode, \"quoted\" <&> name"),
				NameUTF8Valid: true, TotalSize: new(int64(12)), PieceLength: new(int64(16384)), FileCount: new(int32(2)),
				Files: []schema.File{{Path: "dir/a,b.txt", PathRaw: []byte("dir/a,b.txt"), Length: 5},
					{Path: "c \"d\"\\e.bin", PathRaw: []byte("c \"d\"\\e.bin"), Length: 7}},
				InfoBytes: []byte("d4:name3:abce")}},
		{InfoHash: schema.Hash{0x80, 0x23}, HashType: schema.HashV2, FetchedAt: 1767328200001, MetadataSize: 80,
			Meta: schema.Meta{Name: new(""), NameRaw: []byte{}, NameUTF8Valid: true, TotalSize: new(int64(0)),
				PieceLength: new(int64(32768)), FileCount: new(int32(1)), Files: []schema.File{}, Private: true}},
		{InfoHash: schema.Hash{0xfe}, HashType: schema.HashV1, FetchedAt: 1767328200002, MetadataSize: 90,
			Meta: schema.Meta{NameRaw: []byte{0xff, 0xfe, 'x'}, TotalSize: new(int64(1 << 40)), FileCount: new(int32(1)),
				Files: []schema.File{{Path: "\ufffd", PathRaw: []byte{0xff}, Length: 1 << 40}}}},
	}
}

// checkVaried fails t unless every column of the stream has two
// distinct values (null one of them), and nulls if it is nullable: rows that would hide a
// field appended wrong are no test of it.
func checkVaried(t *testing.T, stream []byte) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() {
		t.Fatalf("no record batch: %v", r.Err())
	}
	rec := r.Record()
	for i, f := range rec.Schema().Fields() {
		col := rec.Column(i)
		seen := map[string]bool{} // null counts: an optional bool has one value besides
		for j := range col.Len() {
			seen[col.ValueStr(j)+fmt.Sprint(col.IsNull(j))] = true
		}
		if len(seen) < 2 {
			t.Errorf("column %s has %d distinct values", f.Name, len(seen))
		}
		if f.Nullable && col.NullN() == 0 {
			t.Errorf("nullable column %s has no null", f.Name)
		}
	}
}

// streamDiff names the first column whose values differ between two
// Arrow streams of one record batch, and the first row where they do.
func streamDiff(t *testing.T, got, want []byte) string {
	t.Helper()
	read := func(b []byte) (*ipc.Reader, error) {
		r, err := ipc.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if !r.Next() {
			r.Release()
			return nil, fmt.Errorf("no record batch: %v", r.Err())
		}
		return r, nil
	}
	g, err := read(got)
	if err != nil {
		return fmt.Sprintf("got: %v", err)
	}
	defer g.Release()
	w, err := read(want)
	if err != nil {
		return fmt.Sprintf("want: %v", err)
	}
	defer w.Release()
	gr, wr := g.Record(), w.Record()
	if !gr.Schema().Equal(wr.Schema()) {
		return fmt.Sprintf("schema\n got  %s\n want %s", gr.Schema(), wr.Schema())
	}
	for i, f := range gr.Schema().Fields() {
		gc, wc := gr.Column(i), wr.Column(i)
		if array.Equal(gc, wc) {
			continue
		}
		for j := range min(gc.Len(), wc.Len()) {
			if gc.IsValid(j) != wc.IsValid(j) || gc.ValueStr(j) != wc.ValueStr(j) {
				return fmt.Sprintf("column %s row %d: got %s, want %s", f.Name, j, gc.ValueStr(j), wc.ValueStr(j))
			}
		}
		return fmt.Sprintf("column %s: %d rows, want %d", f.Name, gc.Len(), wc.Len())
	}
	return fmt.Sprintf("same values, %d bytes, want %d", len(got), len(want))
}
