package dedup

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// checkExactStatistics fails t unless every INT32 and INT64 column chunk
// of the Parquet file at path that has statistics has the exact minimum
// and maximum of its non-null values: readers answer min() and max() from
// them (arrow-rs and DataFusion take such statistics as exact).
func checkExactStatistics(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for g, rg := range pf.RowGroups() {
		for c, cc := range rg.ColumnChunks() {
			md := pf.Metadata().RowGroups[g].Columns[c].MetaData
			st := md.Statistics
			if (md.Type != format.Int64 && md.Type != format.Int32) || st.MinValue == nil {
				continue
			}
			lo, hi, n := chunkBounds(t, path, cc)
			var slo, shi int64
			if md.Type == format.Int64 {
				slo, shi = int64(binary.LittleEndian.Uint64(st.MinValue)), int64(binary.LittleEndian.Uint64(st.MaxValue))
			} else {
				slo, shi = int64(int32(binary.LittleEndian.Uint32(st.MinValue))), int64(int32(binary.LittleEndian.Uint32(st.MaxValue)))
			}
			if n == 0 || slo != lo || shi != hi {
				t.Errorf("%s: row group %d, column %v: statistics %d..%d, values %d..%d (%d of them)",
					path, g, md.PathInSchema, slo, shi, lo, hi, n)
			}
		}
	}
}

// chunkBounds returns the least and greatest non-null value of an integer
// column chunk, and how many there are.
func chunkBounds(t *testing.T, path string, cc parquet.ColumnChunk) (lo, hi int64, n int) {
	t.Helper()
	pages := cc.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return lo, hi, n
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vr := p.Values()
		for {
			k, err := vr.ReadValues(buf)
			for _, v := range buf[:k] {
				if v.IsNull() {
					continue
				}
				x := v.Int64()
				if v.Kind() == parquet.Int32 {
					x = int64(v.Int32())
				}
				if n == 0 || x < lo {
					lo = x
				}
				if n == 0 || x > hi {
					hi = x
				}
				n++
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		parquet.Release(p)
	}
}
