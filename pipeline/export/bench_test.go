package export

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/stategen/genstate"
)

// benchRows is the size of the state BenchmarkExport exports: a row per
// hash, over every partition, drawn as tools/stategen draws them.
const benchRows = 200_000

// BenchmarkExport times export of a generated state (and of the catalog
// joined from it) in each format that does the work of the large exports,
// written to io.Discard. scripts/bench-export.sh times the command on a
// larger state beside DuckDB's COPY of the same files.
func BenchmarkExport(b *testing.B) {
	dir := b.TempDir()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var states []schema.State
	r := rand.New(rand.NewPCG(1, 2))
	for p := range 256 {
		states = append(states, genstate.Rows(r, byte(p), benchRows/256, now)...)
	}
	datasettest.CommitStateFiles(b, dir, datasettest.HotFiles(states))
	for _, table := range []string{"state", "catalog"} {
		for _, format := range []string{"parquet", "csv", "jsonl", "arrow", "magnet"} {
			b.Run(table+"/"+format, func(b *testing.B) {
				o := DefaultOptions()
				o.Data, o.Table, o.Format, o.Stdout = dir, table, format, io.Discard
				var rows int64
				for b.Loop() {
					st, err := Run(context.Background(), o)
					if err != nil {
						b.Fatal(err)
					}
					rows = st.Rows
				}
				if rows != int64(len(states)/256*256) {
					b.Fatalf("exported %d rows, want %d", rows, len(states)/256*256)
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
			})
		}
	}
}
