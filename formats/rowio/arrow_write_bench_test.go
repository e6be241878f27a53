package rowio_test

import (
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/stategen/genstate"
)

// BenchmarkArrowWriterStates writes a partition's worth of state rows
// (16Ki, drawn as tools/stategen draws them) as one Arrow record batch a
// Write: what export --format arrow does per partition.
func BenchmarkArrowWriterStates(b *testing.B) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	rows := genstate.Rows(rand.New(rand.NewPCG(1, 2)), 0x42, 16<<10, now)
	w := rowio.NewArrowWriter[schema.State]("bench", io.Discard)
	for b.Loop() {
		if err := w.Write(rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}
