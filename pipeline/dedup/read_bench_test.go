package dedup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
)

// benchInput writes 1M observations (200k distinct) once per benchmark.
func benchInput(b *testing.B) input {
	b.Helper()
	p := writeRows(b, filepath.Join(b.TempDir(), "obs.parquet"), genObs(1, 1_000_000, 200_000))
	in, err := probe(p, p, "")
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkReadInput is dedup's whole reading path for one Parquet file,
// untrusted-input checks included.
func BenchmarkReadInput(b *testing.B) {
	in := benchInput(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt := newBatch(3600_000)
		if _, err := readInput(context.Background(), in, t0.UnixMilli(), bt); err != nil {
			b.Fatal(err)
		}
		bt.release()
	}
	b.ReportMetric(1e6*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkOpenParquet compares opening with the checks (footer walk,
// metadata, every page header of dedup's columns) to parquet-go's own.
func BenchmarkOpenParquet(b *testing.B) {
	in := benchInput(b)
	f, err := os.Open(in.path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.Run("checked", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := rowio.OpenParquet(f, in.size, obsColumns, rowio.DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parquet-go", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := parquet.OpenFile(f, in.size); err != nil {
				b.Fatal(err)
			}
		}
	})
}
