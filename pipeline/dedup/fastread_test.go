package dedup

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// Observations as other tools write them: everything optional, info_hash
// a BLOB of 20 or 32 bytes, times in micro- or nanoseconds.
type (
	blobMicros struct {
		InfoHash   []byte `parquet:"info_hash,optional"`
		InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
		HashType   int8   `parquet:"hash_type,optional,int(8)"`
		ObservedAt int64  `parquet:"observed_at,optional,timestamp(microsecond)"`
		Source     string `parquet:"source,optional"`
	}
	blobNanosDict struct {
		InfoHash   []byte `parquet:"info_hash,optional,dict"`
		InfoHashV2 []byte `parquet:"info_hash_v2,optional,dict"`
		ObservedAt int64  `parquet:"observed_at,timestamp(nanosecond:local)"`
		Source     string `parquet:"source,optional,dict"`
	}
	fixedOptional struct {
		InfoHash   [20]byte `parquet:"info_hash,optional"`
		ObservedAt int64    `parquet:"observed_at,optional,timestamp(millisecond)"`
	}
)

// otherWriters makes n rows of each layout, with v2 hashes (32-byte
// BLOBs, some with an explicit info_hash_v2), repeats, null sources and
// hash types; it returns the files.
func otherWriters(t *testing.T, n int) map[string]string {
	r := rand.New(rand.NewPCG(3, 4))
	hashes := make([][]byte, n/4)
	for i := range hashes {
		size := 20
		if i%9 == 0 {
			size = 32
		}
		hashes[i] = make([]byte, size)
		for k := range hashes[i] {
			hashes[i][k] = byte(r.Uint32())
		}
	}
	micros := make([]blobMicros, n)
	nanos := make([]blobNanosDict, n)
	fixed := make([]fixedOptional, n)
	sources := []string{"", schema.SourceGetPeers, schema.SourceAnnouncePeer}
	for i := range n {
		h := hashes[r.IntN(len(hashes))]
		at := t0.UnixMilli() + r.Int64N(3_600_000)
		m := blobMicros{InfoHash: h, ObservedAt: at*1000 + r.Int64N(1000), Source: sources[r.IntN(3)], HashType: int8(r.IntN(3))}
		if len(h) == 32 && r.IntN(2) == 0 {
			m.InfoHashV2 = h
		}
		micros[i] = m
		nanos[i] = blobNanosDict{InfoHash: h, ObservedAt: at*1_000_000 + r.Int64N(1_000_000), Source: m.Source}
		if len(h) == 32 { // DuckDB's layout: a 20-byte key, the v2 hash apart
			nanos[i].InfoHash, nanos[i].InfoHashV2 = h[:20], h
		}
		copy(fixed[i].InfoHash[:], h)
		fixed[i].ObservedAt = at
	}
	dir := t.TempDir()
	return map[string]string{
		"BLOB, microseconds":           writeRows(t, filepath.Join(dir, "micros.parquet"), micros),
		"BLOB dictionary, nanoseconds": writeRows(t, filepath.Join(dir, "nanos.parquet"), nanos),
		"optional FIXED(20)":           writeRows(t, filepath.Join(dir, "fixed.parquet"), fixed),
	}
}

// TestFastPathMatchesRowReader: files of other writers take the fast path
// and aggregate exactly as the row reader aggregates them.
func TestFastPathMatchesRowReader(t *testing.T) {
	for name, p := range otherWriters(t, 20000) {
		t.Run(name, func(t *testing.T) {
			in, err := probe(p, p, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := fastLayoutOf(t, p); !ok {
				t.Fatal("the fast path refuses the layout")
			}
			compareReaders(t, in)
		})
	}
}

// compareReaders reads in through the fast path and the row reader and
// fails unless both aggregate it alike.
func compareReaders(t *testing.T, in input) {
	t.Helper()
	defer func() { fastPath = true }()
	var got [2]string
	for k, fast := range []bool{true, false} {
		fastPath = fast
		b := newBatch(3600_000)
		if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
			t.Fatal(err)
		}
		got[k] = describe(b)
		b.release()
	}
	if got[0] != got[1] {
		t.Fatalf("fast path:\n%.2000s\nrow reader:\n%.2000s", got[0], got[1])
	}
}

// describe lists a batch's aggregates in hash order, sources by name.
func describe(b *batch) string {
	var sb strings.Builder
	for p := range 256 {
		for _, e := range b.sorted(byte(p), nil) {
			a := e.agg
			fmt.Fprintf(&sb, "%x %d %s %d %d %d %.9g %x\n", a.h, a.typ(), b.srcs[a.src], a.count, b.first(&a), a.last, a.act, b.v2Of(&a))
		}
	}
	fmt.Fprintf(&sb, "%d observations\n", b.obs)
	return sb.String()
}

// TestFastPathBadRows: a null or mis-sized info_hash and a null
// observed_at are bad input named by row, in plain and dictionary pages.
func TestFastPathBadRows(t *testing.T) {
	good := make([]byte, 20)
	rows := func(bad blobMicros) []blobMicros {
		out := make([]blobMicros, 5000)
		for i := range out {
			out[i] = blobMicros{InfoHash: good, ObservedAt: t0.UnixMilli() * 1000}
		}
		out[4321] = bad
		return out
	}
	dir := t.TempDir()
	tests := []struct{ name, path, want string }{
		{"null info_hash", writeRows(t, filepath.Join(dir, "a.parquet"), rows(blobMicros{ObservedAt: t0.UnixMilli() * 1000})),
			"row 4322: info_hash is null"},
		{"19 bytes", writeRows(t, filepath.Join(dir, "b.parquet"), rows(blobMicros{InfoHash: make([]byte, 19), ObservedAt: t0.UnixMilli() * 1000})),
			"row 4322: info_hash has 19 bytes, want 20 (or 32 for v2)"},
		{"null observed_at", writeRows(t, filepath.Join(dir, "c.parquet"), rows(blobMicros{InfoHash: good})),
			"row 4322: observed_at is null"},
		{"19 bytes in a dictionary", writeRows(t, filepath.Join(dir, "d.parquet"), []blobNanosDict{
			{InfoHash: good, ObservedAt: t0.UnixNano()}, {InfoHash: good, ObservedAt: t0.UnixNano()},
			{InfoHash: make([]byte, 19), ObservedAt: t0.UnixNano()}}), "row 3: info_hash has 19 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := probe(tt.path, "in.parquet", "")
			if err != nil {
				t.Fatal(err)
			}
			b := newBatch(3600_000)
			defer b.release()
			_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// arrowStream writes an Arrow IPC stream of the observations as another
// tool might: info_hash a BLOB (32 bytes for v2 hashes with v2Blobs),
// times in microseconds, some sources null, in batches of batchRows.
func arrowStream(t *testing.T, obs []schema.Observation, batchRows int, v2Blobs bool) []byte {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "source", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "hash_type", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i, o := range obs {
		h := o.InfoHash[:]
		if len(o.InfoHashV2) == 32 && v2Blobs {
			h = o.InfoHashV2
		}
		b.Field(0).(*array.BinaryBuilder).Append(h)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(o.ObservedAt*1000 + int64(i%1000)))
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(o.Source)
		}
		if i%3 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int32Builder).Append(int32(o.HashType))
		}
		if (i+1)%batchRows == 0 || i == len(obs)-1 {
			rec := b.NewRecord()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowColumnsMatchRowReader: Arrow streams (infohash's own and
// another tool's layout, many batches, so recycled buffers) aggregate
// column by column exactly as the row reader aggregates them.
func TestArrowColumnsMatchRowReader(t *testing.T) {
	obs := genObs(11, 30000, 5000)
	sources := []string{"dht_get_peers", "dht_announce_peer", "dht_sample_infohashes", "import", "x-custom"}
	for i := range obs {
		obs[i].Source = sources[(i/700)%len(sources)] // a new source now and then, batch after batch
		if i%97 == 0 {
			obs[i].InfoHashV2 = append(obs[i].InfoHash[:], bytes.Repeat([]byte{byte(i)}, 12)...)
			obs[i].HashType = schema.HashV2
		}
	}
	dir := t.TempDir()
	var own bytes.Buffer
	w, err := rowio.Create[schema.Observation]("-", &own)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(obs); lo += 1000 { // batches of 1000
		if err := w.Write(obs[lo:min(lo+1000, len(obs))]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for name, stream := range map[string][]byte{"own": own.Bytes(), "BLOB, microseconds": arrowStream(t, obs, 777, false)} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "")+".arrow")
			if err := os.WriteFile(p, stream, 0o644); err != nil {
				t.Fatal(err)
			}
			in, err := probe(p, p, "")
			if err != nil {
				t.Fatal(err)
			}
			compareReaders(t, in)
		})
	}
}

// TestArrowV2Blobs: a 32-byte info_hash in an Arrow stream is a v2 hash,
// keyed by its first 20 bytes and kept whole.
func TestArrowV2Blobs(t *testing.T) {
	obs := genObs(12, 50, 50)
	full := append(obs[7].InfoHash[:], bytes.Repeat([]byte{0xab}, 12)...)
	obs[7].InfoHashV2 = full
	p := filepath.Join(t.TempDir(), "v2.arrow")
	if err := os.WriteFile(p, arrowStream(t, obs, 20, true), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := probe(p, p, "")
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch(3600_000)
	defer b.release()
	if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
		t.Fatal(err)
	}
	h := obs[7].InfoHash
	a, _, ok := b.parts[h[0]].find(&h)
	if !ok || a.typ() != schema.HashV2 || !bytes.Equal(b.v2Of(a), full) {
		t.Fatalf("found %v, type %d, v2 %x", ok, a.typ(), b.v2Of(a))
	}
}

// TestArrowBadRows: a null or mis-sized info_hash and a null observed_at
// in an Arrow stream are bad input named by row.
func TestArrowBadRows(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	}, nil)
	stream := func(bad func(hb *array.BinaryBuilder, tb *array.TimestampBuilder)) string {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		defer b.Release()
		for batch := range 2 {
			for i := range 100 {
				if batch == 1 && i == 42 {
					bad(b.Field(0).(*array.BinaryBuilder), b.Field(1).(*array.TimestampBuilder))
					continue
				}
				b.Field(0).(*array.BinaryBuilder).Append(make([]byte, 20))
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(t0.UnixMilli()))
			}
			rec := b.NewRecord()
			w.Write(rec)
			rec.Release()
		}
		w.Close()
		p := filepath.Join(t.TempDir(), "bad.arrow")
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	at := arrow.Timestamp(t0.UnixMilli())
	tests := []struct {
		name string
		bad  func(*array.BinaryBuilder, *array.TimestampBuilder)
		want string
	}{
		{"null info_hash", func(hb *array.BinaryBuilder, tb *array.TimestampBuilder) { hb.AppendNull(); tb.Append(at) },
			"row 143: info_hash is null"},
		{"19 bytes", func(hb *array.BinaryBuilder, tb *array.TimestampBuilder) { hb.Append(make([]byte, 19)); tb.Append(at) },
			"row 143: info_hash has 19 bytes, want 20 (or 32 for v2)"},
		{"null observed_at", func(hb *array.BinaryBuilder, tb *array.TimestampBuilder) {
			hb.Append(make([]byte, 20))
			tb.AppendNull()
		},
			"row 143: observed_at is null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := stream(tt.bad)
			in, err := probe(p, "in.arrow", "")
			if err != nil {
				t.Fatal(err)
			}
			b := newBatch(3600_000)
			defer b.release()
			_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "in.arrow") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestV2WrongLength: an info_hash_v2 of other than 32 bytes (or none: null)
// is bad input named by row, in plain and dictionary pages and Arrow
// streams, through the column and the row readers; it was dropped.
func TestV2WrongLength(t *testing.T) {
	h := make([]byte, 20)
	full := append(bytes.Clone(h), make([]byte, 12)...)
	at := t0.UnixMilli()
	plain := make([]blobMicros, 5000)
	dict := make([]blobNanosDict, 5000)
	for i := range plain {
		plain[i] = blobMicros{InfoHash: h, ObservedAt: at * 1000}
		dict[i] = blobNanosDict{InfoHash: h, ObservedAt: at * 1_000_000}
		if i%3 == 0 { // v2 hashes between nulls: the rows are not the values' indexes
			plain[i].InfoHashV2, dict[i].InfoHashV2 = full, full
		}
	}
	plain[4322].InfoHashV2, dict[4322].InfoHashV2 = full[:16], full[:16]
	dir := t.TempDir()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.Binary},
		{Name: "info_hash_v2", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	}, nil)
	var stream bytes.Buffer
	w := ipc.NewWriter(&stream, ipc.WithSchema(sch))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	for i := range 300 {
		rb.Field(0).(*array.BinaryBuilder).Append(h)
		switch {
		case i == 242:
			rb.Field(1).(*array.BinaryBuilder).Append(full[:16])
		case i%3 == 0:
			rb.Field(1).(*array.BinaryBuilder).Append(full)
		default:
			rb.Field(1).AppendNull()
		}
		rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(at))
		if i%100 == 99 {
			rec := rb.NewRecord()
			w.Write(rec)
			rec.Release()
		}
	}
	w.Close()
	rb.Release()
	arrowPath := filepath.Join(dir, "v2.arrow")
	if err := os.WriteFile(arrowPath, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"plain", writeRows(t, filepath.Join(dir, "a.parquet"), plain), "row 4323: info_hash_v2 has 16 bytes, want 32"},
		{"dictionary", writeRows(t, filepath.Join(dir, "b.parquet"), dict), "row 4323: info_hash_v2 has 16 bytes, want 32"},
		{"Arrow", arrowPath, "row 243: info_hash_v2 has 16 bytes, want 32"},
	}
	defer func() { fastPath = true }()
	for _, tt := range tests {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s fast %v", tt.name, fast), func(t *testing.T) {
				fastPath = fast
				in, err := probe(tt.path, "in", "")
				if err != nil {
					t.Fatal(err)
				}
				b := newBatch(3600_000)
				defer b.release()
				_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
				if err == nil || !strings.Contains(err.Error(), "dedup: in: "+tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
			})
		}
	}
}
