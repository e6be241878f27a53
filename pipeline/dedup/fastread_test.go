package dedup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

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
	defer func() { fastPath = true }()
	for name, p := range otherWriters(t, 20000) {
		t.Run(name, func(t *testing.T) {
			in, err := probe(p, p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size())
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := fastLayout(pf); !ok {
				t.Fatal("the fast path refuses the layout")
			}
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
		})
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
			"row 4321: info_hash is null"},
		{"19 bytes", writeRows(t, filepath.Join(dir, "b.parquet"), rows(blobMicros{InfoHash: make([]byte, 19), ObservedAt: t0.UnixMilli() * 1000})),
			"row 4321: info_hash has 19 bytes, want 20 (or 32 for v2)"},
		{"null observed_at", writeRows(t, filepath.Join(dir, "c.parquet"), rows(blobMicros{InfoHash: good})),
			"row 4321: observed_at is null"},
		{"19 bytes in a dictionary", writeRows(t, filepath.Join(dir, "d.parquet"), []blobNanosDict{
			{InfoHash: good, ObservedAt: t0.UnixNano()}, {InfoHash: good, ObservedAt: t0.UnixNano()},
			{InfoHash: make([]byte, 19), ObservedAt: t0.UnixNano()}}), "row 2: info_hash has 19 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := probe(tt.path, "in.parquet")
			if err != nil {
				t.Fatal(err)
			}
			_, err = readInput(context.Background(), in, t0.UnixMilli(), newBatch(3600_000))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
