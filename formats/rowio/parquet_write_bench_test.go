package rowio

import (
	"io"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// BenchmarkParquetWriterResults writes 10k results of 2 KiB info
// dictionaries, the common size: the cost of the byte bound's checks.
func BenchmarkParquetWriterResults(b *testing.B) {
	rows := make([]schema.Result, 10000)
	for i := range rows {
		rows[i] = blobResult(i, 2<<10)
	}
	b.SetBytes(int64(len(rows)) * 2 << 10)
	for b.Loop() {
		w := NewParquetWriter[schema.Result](io.Discard)
		if _, err := w.Write(rows); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
