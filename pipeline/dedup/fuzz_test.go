package dedup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// fuzzSeeds are whole input files: valid ones written by the code in
// every layout dedup accepts, and damaged copies of them.
func fuzzSeeds(t testing.TB) [][]byte {
	t.Helper()
	dir := t.TempDir()
	obs := genObs(1, 40, 20)
	obs[3].InfoHashV2 = bytes.Repeat([]byte{7}, 32)
	obs[3].HashType = schema.HashV2
	own := readBack(t, writeRows(t, filepath.Join(dir, "own.parquet"), obs))
	duck := readBack(t, writeDuckDB(t, dir, obs))
	var arrow bytes.Buffer
	w, _ := rowio.Create[schema.Observation]("-", &arrow)
	w.Write(obs[:5])
	w.Close()
	blobs := make([]blobNanosDict, len(obs)) // optional, dictionaries, a 32-byte hash
	for i, o := range obs {
		blobs[i] = blobNanosDict{InfoHash: o.InfoHash[:], ObservedAt: o.ObservedAt * 1_000_000, Source: o.Source}
	}
	blobs[5].InfoHash = bytes.Repeat([]byte{9}, 32)
	blob := readBack(t, writeRows(t, filepath.Join(dir, "blob.parquet"), blobs))
	// Unsigned hash_type columns (UINTEGER in a dictionary, UBIGINT),
	// read by value by their own page reader and conversion.
	u32 := make([]u32DictType, 8)
	u64 := make([]u64Type, 8)
	for i, o := range obs[:8] {
		u32[i] = u32DictType{o.InfoHash, o.ObservedAt, uint32(o.HashType)}
		u64[i] = u64Type{o.InfoHash, o.ObservedAt, uint64(o.HashType)}
	}
	// Announced ports as BIGINT (pandas' and pyarrow's default), read by
	// value page by page (portPage64): ports, a non-port, one past int32.
	ports := make([]i64PortRow, 8)
	for i, o := range obs[:8] {
		ports[i] = i64PortRow{o.InfoHash, o.ObservedAt, schema.SourceAnnouncePeer, "127.0.0.1:1", int64(6881 + i)}
	}
	ports[2].PeerPort = 70000
	wide := append([]i64PortRow(nil), ports...)
	wide[5].PeerPort = 1 << 40
	// Announced ports of the other integer types, read page by page too
	// (portPageOf for a UINTEGER, portPage for the narrower ones): in
	// two row groups, with a null; ports, and one past int32.
	narrow := [][]byte{
		readBack(t, writeGroupsOf3(t, filepath.Join(dir, "port-u32.parquet"), portRows[uint32](t, "6881"))),
		readBack(t, writeGroupsOf3(t, filepath.Join(dir, "port-u32past.parquet"), portRows[uint32](t, "4294967295"))),
		readBack(t, writeGroupsOf3(t, filepath.Join(dir, "port-u32dict.parquet"), dictRows(portRows[uint32](t, "2147483648")))),
		readBack(t, writeGroupsOf3(t, filepath.Join(dir, "port-u16dict.parquet"), dictRows(portRows[uint16](t, "65535")))),
		readBack(t, writeGroupsOf3(t, filepath.Join(dir, "port-i8.parquet"), portRows[int8](t, "-1"))),
	}
	seeds := [][]byte{own, duck, blob, arrow.Bytes(), blobSourceStream(t, obs[:6]),
		[]byte("0123456789abcdef0123456789abcdef01234567\n"),
		readBack(t, writeRows(t, filepath.Join(dir, "u32.parquet"), u32)),
		readBack(t, writeRows(t, filepath.Join(dir, "u64.parquet"), u64)),
		readBack(t, writeRows(t, filepath.Join(dir, "ports.parquet"), ports)),
		readBack(t, writeRows(t, filepath.Join(dir, "wideports.parquet"), wide))}
	seeds = append(seeds, narrow...)
	for _, b := range [][]byte{own, duck, blob} {
		seeds = append(seeds, b[:len(b)/2], b[:len(b)-9], flip(b, len(b)-20), flip(b, len(b)/2), flip(b, 40))
	}
	// What DuckDB itself writes (padded level runs, nulls).
	golden, _ := filepath.Glob(duckFile("*.parquet"))
	for _, p := range golden {
		seeds = append(seeds, readBack(t, p))
	}
	return seeds
}

// i64PortRow is an announce_peer observation whose port is a BIGINT.
type i64PortRow struct {
	InfoHash   schema.Hash `parquet:"info_hash"`
	ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
	Source     string      `parquet:"source,dict"`
	NodeAddr   string      `parquet:"node_addr,optional"`
	PeerPort   int64       `parquet:"peer_port,optional"`
}

// blobSourceStream is obs as an Arrow IPC stream whose source is binary
// (a BLOB) and hash_type uint64, which the readers take too.
func blobSourceStream(t testing.TB, obs []schema.Observation) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "hash_type", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "source", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for _, o := range obs {
		b.Field(0).(*array.BinaryBuilder).Append(o.InfoHash[:])
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(o.ObservedAt))
		b.Field(2).(*array.Uint64Builder).Append(uint64(o.HashType))
		b.Field(3).(*array.BinaryBuilder).Append([]byte(o.Source))
	}
	rec := b.NewRecord()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readBack(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// duckObs is how DuckDB writes observations: BLOB hash, microseconds.
type duckObs struct {
	InfoHash   []byte `parquet:"info_hash"`
	ObservedAt int64  `parquet:"observed_at,timestamp(microsecond:local)"`
	Source     string `parquet:"source"`
}

func writeDuckDB(t testing.TB, dir string, obs []schema.Observation) string {
	t.Helper()
	rows := make([]duckObs, len(obs))
	for i, o := range obs {
		rows[i] = duckObs{InfoHash: append([]byte(nil), o.InfoHash[:]...), ObservedAt: o.ObservedAt * 1000, Source: o.Source}
	}
	return writeRows(t, filepath.Join(dir, "duck.parquet"), rows)
}

func writeRows[T any](t testing.TB, p string, rows []T) string {
	t.Helper()
	w, err := rowio.Create[T](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzDedupParquetInput feeds whole files through dedup's reading path:
// every outcome must be rows read or one line of bad input, never a panic.
// A file whose pages' CRCs do not match is read again with matching ones
// (rowiotest.FixPageCRCs), as a crafted file would have them: else the
// CRC check would stop every change to a page before its decoders.
func FuzzDedupParquetInput(f *testing.F) {
	rowio.FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	p := filepath.Join(f.TempDir(), "in.parquet") // one worker runs one input at a time
	f.Fuzz(func(t *testing.T, data []byte) {
		rowiotest.AsIsAndFixed(t, data, func(t *testing.T, data []byte) { readFuzzInput(t, p, data) })
	})
}

// readFuzzInput is FuzzDedupParquetInput's check of one input, written
// to p.
func readFuzzInput(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := probe(p, "in.parquet", "")
	if err != nil {
		return
	}
	b := newBatch(3600_000)
	defer b.release() // its arena: 64 MB of address space a run otherwise
	_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
	if err == nil {
		return
	}
	if exitcode.Of(err) != exitcode.Usage || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "in.parquet") {
		t.Fatalf("exit %d: %q", exitcode.Of(err), err)
	}
}
