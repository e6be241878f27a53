package datasettest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// CheckExactStatistics fails t unless every INT32, INT64 and
// FIXED_LEN_BYTE_ARRAY column chunk of the Parquet file at path that has
// statistics has the exact minimum and maximum of its non-null values:
// readers answer min() and max() from them (arrow-rs and DataFusion take
// such statistics as exact), and skip row groups by them (DuckDB's
// info_hash = X), where a wrong bound loses rows.
func CheckExactStatistics(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for g, rg := range pf.RowGroups() {
		for c, cc := range rg.ColumnChunks() {
			md := pf.Metadata().RowGroups[g].Columns[c].MetaData
			st := md.Statistics
			if st.MinValue == nil {
				continue
			}
			if md.Type == format.FixedLenByteArray {
				lo, hi, n := chunkByteBounds(t, path, cc)
				if n == 0 || !bytes.Equal(st.MinValue, lo) || !bytes.Equal(st.MaxValue, hi) {
					t.Errorf("%s: row group %d, column %v: statistics %x..%x, values %x..%x (%d of them)",
						path, g, md.PathInSchema, st.MinValue, st.MaxValue, lo, hi, n)
				}
				continue
			}
			if md.Type != format.Int64 && md.Type != format.Int32 {
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
func chunkBounds(t testing.TB, path string, cc parquet.ColumnChunk) (lo, hi int64, n int) {
	t.Helper()
	eachValue(t, path, cc, func(v parquet.Value) {
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
	})
	return lo, hi, n
}

// chunkByteBounds is chunkBounds for fixed-length byte arrays, ordered
// as unsigned bytes.
func chunkByteBounds(t testing.TB, path string, cc parquet.ColumnChunk) (lo, hi []byte, n int) {
	t.Helper()
	eachValue(t, path, cc, func(v parquet.Value) {
		x := v.ByteArray()
		if n == 0 || bytes.Compare(x, lo) < 0 {
			lo = bytes.Clone(x)
		}
		if n == 0 || bytes.Compare(x, hi) > 0 {
			hi = bytes.Clone(x)
		}
		n++
	})
	return lo, hi, n
}

// eachValue calls fn with each non-null value of column chunk cc.
func eachValue(t testing.TB, path string, cc parquet.ColumnChunk, fn func(parquet.Value)) {
	t.Helper()
	pages := cc.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vr := p.Values()
		for {
			k, err := vr.ReadValues(buf)
			for _, v := range buf[:k] {
				if !v.IsNull() {
					fn(v)
				}
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
