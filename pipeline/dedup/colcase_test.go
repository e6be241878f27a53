package dedup

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestColumnNamesFoldCase: DuckDB matches column names case-insensitively,
// so an INFO_HASH column (Parquet through either reader, or an Arrow
// stream) is dedup's info_hash; it was "missing column \"info_hash\"".
func TestColumnNamesFoldCase(t *testing.T) {
	at := t0.UnixMilli()
	type fixedUpper struct { // the fast path's layout
		InfoHash   [20]byte `parquet:"INFO_HASH"`
		ObservedAt int64    `parquet:"Observed_At,timestamp(millisecond)"`
		Source     string   `parquet:"SOURCE"`
	}
	type blobUpper struct { // an INT64 hash_type: the row reader
		InfoHash   []byte `parquet:"Info_Hash"`
		HashType   int64  `parquet:"HASH_TYPE"`
		ObservedAt int64  `parquet:"OBSERVED_AT,timestamp(microsecond)"`
	}
	dir := t.TempDir()
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var arrowStream bytes.Buffer
	if err := writeArrowRows(&arrowStream, []fixedUpper{{InfoHash: [20]byte{3}, ObservedAt: at, Source: "x"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		hash       schema.Hash
	}{
		{"Parquet, fast path", put("fast.parquet", writeRowsBytes(t, dir, []fixedUpper{{InfoHash: [20]byte{1}, ObservedAt: at, Source: "x"}})), schema.Hash{1}},
		{"Parquet, row reader", put("rows.parquet", writeRowsBytes(t, dir, []blobUpper{{InfoHash: bytes.Repeat([]byte{2}, 20), HashType: 1, ObservedAt: at * 1000}})), schema.Hash(bytes.Repeat([]byte{2}, 20))},
		{"Arrow", put("upper.arrows", arrowStream.Bytes()), schema.Hash{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			if _, err := run(t, data, nil, tt.path); err != nil {
				t.Fatal(err)
			}
			st, ok := readState(t, data)[tt.hash]
			if !ok || st.LastSeen != at || st.SeenCount != 1 {
				t.Fatalf("state of %x: %+v (found %v), want seen once at %d", tt.hash[:2], st, ok, at)
			}
		})
	}
}
