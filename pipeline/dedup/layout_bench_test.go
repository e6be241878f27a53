package dedup

import (
	"context"
	"encoding/hex"
	"path/filepath"
	"testing"
)

// BenchmarkReadInputLayouts is BenchmarkReadInput for the info_hash
// layouts other writers use, which the column reader checks value by
// value: a BLOB (BYTE_ARRAY of 20 bytes) and a VARCHAR of hex (DuckDB's).
func BenchmarkReadInputLayouts(b *testing.B) {
	type blobObs struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source,dict"`
	}
	type textObs struct {
		InfoHash   string `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source,dict"`
	}
	obs := genObs(1, 1_000_000, 200_000)
	for _, l := range []struct {
		name  string
		write func(p string) string
	}{
		{"blob", func(p string) string {
			rows := make([]blobObs, len(obs))
			for i, o := range obs {
				rows[i] = blobObs{o.InfoHash[:], o.ObservedAt, o.Source}
			}
			return writeRows(b, p, rows)
		}},
		{"text", func(p string) string {
			rows := make([]textObs, len(obs))
			for i, o := range obs {
				rows[i] = textObs{hex.EncodeToString(o.InfoHash[:]), o.ObservedAt, o.Source}
			}
			return writeRows(b, p, rows)
		}},
	} {
		b.Run(l.name, func(b *testing.B) {
			p := l.write(filepath.Join(b.TempDir(), "in.parquet"))
			in, err := probe(p, p, "")
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				bt := newBatch(3600_000)
				if _, err := readInput(context.Background(), in, t0.UnixMilli(), bt); err != nil {
					b.Fatal(err)
				}
				bt.release()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "Mrows/s")
		})
	}
}
