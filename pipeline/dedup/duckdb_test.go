package dedup

import (
	"context"
	"crypto/md5"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// Files DuckDB wrote (testdata/duckdb, made by its gen.sh): 50 rows, one
// page per column, the definition levels of each a bit-packed run padded
// to 256 levels.

func duckFile(name string) string { return filepath.Join("testdata", "duckdb", name) }

// duckHash is row i's info_hash in gen.sh: md5 of i in decimal, then
// 0x01234567.
func duckHash(i int) schema.Hash {
	sum := md5.Sum([]byte(fmt.Sprint(i)))
	var h schema.Hash
	copy(h[:], sum[:])
	copy(h[16:], []byte{0x01, 0x23, 0x45, 0x67})
	return h
}

// TestDuckDBNulls: nulls in optional columns read as absent (a null
// source is an import, a null hash_type v1), through the fast path and
// the row reader alike.
func TestDuckDBNulls(t *testing.T) {
	in, err := probe(duckFile("nulls.parquet"), "nulls.parquet", "")
	if err != nil {
		t.Fatal(err)
	}
	compareReaders(t, in)
	b := newBatch(3600_000)
	defer b.release()
	n, err := readInput(context.Background(), in, t0.UnixMilli(), b)
	if err != nil || n != 50 {
		t.Fatalf("%d rows, err %v", n, err)
	}
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	for i := range 50 {
		h := duckHash(i)
		a, _, ok := b.parts[h[0]].find(&h)
		if !ok {
			t.Fatalf("row %d: hash %x not read", i, h)
		}
		want := schema.SourceGetPeers
		if i%3 == 0 {
			want = schema.SourceImport
		}
		if src := b.srcs[a.src]; src != want || a.typ() != schema.HashV1 || a.last != base+int64(i)*1000 {
			t.Fatalf("row %d: source %q type %d at %d", i, src, a.typ(), a.last)
		}
	}
}

// TestDuckDBNullRequired: a null info_hash or observed_at is bad input
// naming the file, the row and the column, through the fast path and the
// row reader (hash_type BIGINT), and commits nothing.
func TestDuckDBNullRequired(t *testing.T) {
	tests := []struct{ file, want string }{
		{"null_info_hash.parquet", "row 8: info_hash is null"},
		{"null_observed_at.parquet", "row 10: observed_at is null"},
		{"null_info_hash_bigint.parquet", "row 8: info_hash is null"},
		{"null_observed_at_bigint.parquet", "row 10: observed_at is null"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := duckFile(tt.file)
			_, err := run(t, filepath.Join(t.TempDir(), "ds"), nil, p)
			want := "dedup: " + p + ": " + tt.want
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d), want %q", err, exitcode.Of(err), want)
			}
		})
	}
}
