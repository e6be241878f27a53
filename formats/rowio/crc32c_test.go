package rowio

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRC32CCombine: the CRC-32C of A‖B joined from those of A and B is
// crc32.Checksum's of the whole, on random splits of random data (empty
// parts and lengths past 2^16 included).
func TestCRC32CCombine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name string
		n    int // of data
	}{{"empty", 0}, {"one byte", 1}, {"small", 100}, {"past 2^16", 70_000}, {"large", len(data)}} {
		t.Run(tc.name, func(t *testing.T) {
			d := data[:tc.n]
			want := crc32.Checksum(d, castagnoli)
			for range 50 {
				cut := 0
				if tc.n > 0 {
					cut = rng.IntN(tc.n + 1)
				}
				a, b := d[:cut], d[cut:]
				got := crc32cCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b)))
				if got != want {
					t.Fatalf("split at %d of %d: %08x, want %08x", cut, tc.n, got, want)
				}
			}
		})
	}
}

// TestCRC32CCombineMany: joining many random parts in order gives the
// whole's CRC-32C.
func TestCRC32CCombineMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for range 20 {
		var crc uint32
		for at := 0; at < len(data); {
			n := min(rng.IntN(50_000), len(data)-at)
			crc = crc32cCombine(crc, crc32.Checksum(data[at:at+n], castagnoli), int64(n))
			at += n
		}
		if want := crc32.Checksum(data, castagnoli); crc != want {
			t.Fatalf("%08x, want %08x", crc, want)
		}
	}
}
