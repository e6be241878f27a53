package dataset

import (
	"bufio"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

func benchStates(n int) []schema.State {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]schema.State, n)
	for i := range rows {
		s := &rows[i]
		for j := range s.InfoHash {
			s.InfoHash[j] = byte(r.Uint32())
		}
		s.HashType = 1
		s.FirstSeen = 1_700_000_000_000 + r.Int64N(1e9)
		s.LastSeen = s.FirstSeen + r.Int64N(1e6)
		s.SeenCount = 1 + r.Int64N(10)
		s.LastSource = "dht_get_peers"
		s.Activity = r.Float64()
		s.MetadataStatus = "new"
		s.NextRetry = s.LastSeen
		s.Tier = "hot"
	}
	return rows
}

func BenchmarkWriteStateGeneric(b *testing.B) {
	rows := benchStates(1 << 20)
	b.SetBytes(int64(len(rows)))
	for b.Loop() {
		bw := bufio.NewWriterSize(io.Discard, 1<<20)
		w := parquet.NewGenericWriter[schema.State](bw, append(rowio.ParquetOptions(), parquet.Compression(rowio.FastSnappy{}))...)
		if _, err := w.Write(rows); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteStateCodecs(b *testing.B) {
	rows := benchStates(1 << 20)
	for _, c := range []struct {
		name  string
		codec compress.Codec
	}{{"better", &snappy.Codec{}}, {"fast", rowio.FastSnappy{}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				bw := bufio.NewWriterSize(io.Discard, 1<<20)
				w := parquet.NewGenericWriter[schema.State](bw, append(rowio.ParquetOptions(), parquet.Compression(c.codec))...)
				if _, err := w.Write(rows); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
