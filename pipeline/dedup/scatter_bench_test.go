package dedup

import (
	"math/rand/v2"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// benchRowGroup is a decoded row group of n random observations.
func benchRowGroup(n int) *rgBuf {
	r := rand.New(rand.NewPCG(1, 2))
	b := &rgBuf{hashes: make([]schema.Hash, n), at: make([]int64, n), src: make([]uint16, n),
		typ: make([]int8, n), hasV2: make([]uint64, n/64+1)}
	for i := range b.hashes {
		for j := range b.hashes[i] {
			b.hashes[i][j] = byte(r.Uint32())
		}
		b.at[i], b.typ[i] = int64(i), schema.HashV1
	}
	return b
}

// BenchmarkScatter is the grouping of a row group's rows by partition.
func BenchmarkScatter(b *testing.B) {
	const n = 262144
	rg := benchRowGroup(n)
	out := &recBuf{}
	rg.scatter(n, out)
	b.ResetTimer()
	for range b.N {
		rg.scatter(n, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
