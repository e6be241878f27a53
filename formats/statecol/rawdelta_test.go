package statecol

import (
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/delta"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestDecodeDeltaInt64 decodes what parquet-go's encoder makes of runs
// of several lengths and spreads (widths 0 to 64, wrapping deltas) and
// compares with parquet-go's decoder; into a reused buffer too.
func TestDecodeDeltaInt64(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	spreads := map[string]func(i int) int64{
		"constant":   func(int) int64 { return 1_700_000_000_000 },
		"small":      func(int) int64 { return int64(rng.IntN(5)) },
		"timestamps": func(int) int64 { return 1_700_000_000_000 + rng.Int64N(30*86400_000) },
		"negative":   func(int) int64 { return -rng.Int64N(1 << 40) },
		"any":        func(int) int64 { return int64(rng.Uint64()) },
		"extremes": func(i int) int64 {
			return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[i%5]
		},
		"widths": func(i int) int64 { return int64(rng.Uint64() >> (i / 32 % 64)) }, // a width a miniblock
	}
	enc := &delta.BinaryPackedEncoding{}
	var buf []int64
	for name, spread := range spreads {
		for _, n := range []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 255, 256, 1000, 78_000} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = spread(i)
			}
			b, err := enc.EncodeInt64(nil, vals)
			if err != nil {
				t.Fatal(err)
			}
			want, err := enc.DecodeInt64(nil, b)
			if err != nil || !slices.Equal(want, vals) {
				t.Fatalf("%s, %d values: parquet-go does not decode its own encoding (%v)", name, n, err)
			}
			got, err := decodeDeltaInt64(buf, b, n)
			if err != nil || !slices.Equal(got, vals) {
				t.Fatalf("%s, %d values: %v (first differing at %d)", name, n, err, firstDiff(got, vals))
			}
			buf = got
			if _, err := decodeDeltaInt64(nil, b, n-1); n > 0 && err == nil {
				t.Fatalf("%s, %d values: decoded past a limit of %d", name, n, n-1)
			}
		}
	}
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzDecodeDeltaInt64: whatever decodeDeltaInt64 accepts, parquet-go's
// decoder decodes to the same values (so a splice that takes the direct
// path reads what the page reader would have).
func FuzzDecodeDeltaInt64(f *testing.F) {
	enc := &delta.BinaryPackedEncoding{}
	for _, vals := range [][]int64{{}, {5}, {1, 2, 3}, {math.MinInt64, math.MaxInt64, 0}} {
		b, _ := enc.EncodeInt64(nil, vals)
		f.Add(b)
	}
	long := make([]int64, 300)
	for i := range long {
		long[i] = int64(i * i * 7919)
	}
	b, _ := enc.EncodeInt64(nil, long)
	f.Add(b)
	f.Add(b[:len(b)-3]) // a short last miniblock
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeDeltaInt64(nil, b, 1<<16)
		if err != nil {
			return
		}
		want, werr := enc.DecodeInt64(nil, b)
		if werr != nil {
			t.Fatalf("decoded %d values of what parquet-go refuses: %v", len(got), werr)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d values, parquet-go %d; first differing at %d", len(got), len(want), firstDiff(got, want))
		}
	})
}

// TestSpliceDamagedDeltaChunk: a splice of a file whose last_seen values
// were damaged on disk does not take them from readDeltaInt64 (its CRC
// check refuses them) and fails as the page reader always made it fail.
func TestSpliceDamagedDeltaChunk(t *testing.T) {
	defer func(n int) { rowGroupRows = n }(rowGroupRows)
	rowGroupRows = 1000
	rows := randomStates(2500, 11, false)
	f, p := openStateFile(t, rows)
	m := f.pf.Metadata().RowGroups[1].Columns[cLastSeen].MetaData
	if _, ok := f.readDeltaInt64(1, cLastSeen, 1000); !ok {
		t.Fatal("our writer's last_seen chunk was not read directly")
	}
	f.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[m.DataPageOffset+m.TotalCompressedSize-5] ^= 0x04 // in the values, past the header
	q := p + ".damaged"
	if err := os.WriteFile(q, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(rowio.UnrecordedFile(q))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok := src.readDeltaInt64(1, cLastSeen, 1000); ok {
		t.Fatal("a damaged chunk was read directly")
	}
	err = Splice(io.Discard, src, ColumnsNamed("last_seen"), func(first, n int64) []int32 {
		return []int32{3}
	}, func(first int64, sel []int32, st []schema.State) (Columns, error) {
		st[0].LastSeen++
		return ColumnsNamed("last_seen"), nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "last_seen: crc32 checksum mismatch") {
		t.Fatalf("err %v, want the page reader's checksum mismatch in last_seen", err)
	}
}

// BenchmarkDecodeDeltaInt64 decodes a splice's timestamp chunk (78k
// millisecond times over a month, ~4 bytes a value packed) with ours and
// with parquet-go's decoder (which clears its output first).
func BenchmarkDecodeDeltaInt64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 78_000)
	for i := range vals {
		vals[i] = 1_700_000_000_000 + rng.Int64N(30*86400_000)
	}
	enc := &delta.BinaryPackedEncoding{}
	src, _ := enc.EncodeInt64(nil, vals)
	dst := make([]int64, 0, len(vals))
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			dst, _ = decodeDeltaInt64(dst, src, len(vals))
		}
	})
	b.Run("parquet-go", func(b *testing.B) {
		for b.Loop() {
			dst, _ = enc.DecodeInt64(dst, src)
		}
	})
}
