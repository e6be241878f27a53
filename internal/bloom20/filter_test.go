package bloom20

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"
)

func randKey(rng *rand.Rand) (key [20]byte) {
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	return key
}

// TestLocations: Locations, and each location modulo m as Reduce takes
// it, are the library's, for random keys, many k and m of every kind.
func TestLocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := [][20]byte{{}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	for range 2000 {
		keys = append(keys, randKey(rng))
	}
	tests := []struct {
		name string
		m    uint64
		k    uint
	}{
		{"m 1 k 1", 1, 1},
		{"m 64 k 3", 64, 3},
		{"m 65 k 3", 65, 3},
		{"power of two", 1 << 20, 7},
		{"dedup's partition", 1495497, 7},
		{"minimum filter", 39255, 7},
		{"odd, many hashes", 1000003, 40},
		{"above 2^32", 1<<32 + 15, 5},
		{"above 2^63", 1<<63 + 1, 9},
		{"largest", ^uint64(0), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewMod(tt.m)
			for _, key := range keys {
				got, want := Locations(&key, tt.k), bloom.Locations(key[:], tt.k)
				if !slices.Equal(got, want) {
					t.Fatalf("key %x k %d: Locations %v, the library's %v", key, tt.k, got, want)
				}
				for i := range got {
					if g, w := r.Reduce(got[i]), want[i]%tt.m; g != w {
						t.Fatalf("key %x location %d mod %d: %d, the library's %d", key, i, tt.m, g, w)
					}
				}
			}
		})
	}
}

// FuzzLocations: for any key, k and m, Locations are the library's, and
// adding the key to an empty filter sets the bits the library's Add sets.
func FuzzLocations(f *testing.F) {
	f.Add([]byte{}, uint8(7), uint32(1495497))
	f.Add([]byte("01234567890123456789"), uint8(1), uint32(0))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), uint8(40), uint32(65))
	f.Fuzz(func(t *testing.T, b []byte, k uint8, m uint32) {
		var key [20]byte
		copy(key[:], b)
		kk := uint(k%64) + 1
		if got, want := Locations(&key, kk), bloom.Locations(key[:], kk); !slices.Equal(got, want) {
			t.Fatalf("key %x k %d: Locations %v, the library's %v", key, kk, got, want)
		}
		mm := uint(m%(1<<16)) + 1
		lib := bloom.New(mm, kk)
		fast := bloom.New(mm, kk)
		lib.Add(key[:])
		ff := Of(fast)
		ff.Add(&key)
		if !lib.Equal(fast) {
			t.Fatalf("key %x k %d m %d: Add set other bits than the library's", key, kk, mm)
		}
		fl := Of(lib)
		if !fl.Test(&key) {
			t.Fatalf("key %x k %d m %d: Test false of the library's filter holding it", key, kk, mm)
		}
	})
}

// TestFilterIsTheLibrarys: a filter filled through Add has the words the
// library's Add leaves and answers the library's Test and TestLocations
// true of every key added; Test is true of every key the library added;
// and of keys never added Test answers as the library's Test does (among
// them false positives). Bitsets longer than m (bloom.From) and shorter
// (which the library extends) are of the cases.
func TestFilterIsTheLibrarys(t *testing.T) {
	tests := []struct {
		name string
		make func() *bloom.BloomFilter
		n    int
		// Of 20000 keys never added, some test negative, some positive.
		someNegative, somePositive bool
	}{
		{"dedup's minimum", func() *bloom.BloomFilter { return bloom.NewWithEstimates(4096, 0.01) }, 2048, true, false},
		{"dedup's partition, m odd", func() *bloom.BloomFilter { return bloom.NewWithEstimates(2*78000, 0.01) }, 78000, true, true},
		{"full, many false positives", func() *bloom.BloomFilter { return bloom.NewWithEstimates(1000, 0.01) }, 3000, true, true},
		{"power of two", func() *bloom.BloomFilter { return bloom.New(1<<16, 5) }, 5000, true, false},
		{"m 1", func() *bloom.BloomFilter { return bloom.New(1, 1) }, 3, false, true},
		{"m 65", func() *bloom.BloomFilter { return bloom.New(65, 3) }, 5, true, true},
		{"bitset longer than m", func() *bloom.BloomFilter { return bloom.FromWithM(make([]uint64, 40), 2000, 4) }, 300, true, true},
		{"bitset shorter than m", func() *bloom.BloomFilter { return bloom.FromWithM(make([]uint64, 2), 2000, 4) }, 300, true, true},
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := make([][20]byte, tt.n)
			for i := range keys {
				keys[i] = randKey(rng)
			}
			lib, fast := tt.make(), tt.make()
			ff := Of(fast)
			for i := range keys {
				lib.Add(keys[i][:])
				ff.Add(&keys[i])
			}
			if !lib.Equal(fast) || !slices.Equal(lib.BitSet().Words(), fast.BitSet().Words()) {
				t.Fatal("the filter filled through Add differs from the library's")
			}
			fl := Of(lib)
			for i := range keys {
				if !fast.Test(keys[i][:]) || !fast.TestLocations(Locations(&keys[i], fast.K())) {
					t.Fatalf("key %d: the library's Test of the filter filled through Add is false", i)
				}
				if !fl.Test(&keys[i]) {
					t.Fatalf("key %d: Test of the library's filled filter is false", i)
				}
			}
			positives := 0
			for range 20000 {
				key := randKey(rng)
				got, want := fl.Test(&key), lib.Test(key[:])
				if got != want {
					t.Fatalf("absent key %x: Test %v, the library's %v", key, got, want)
				}
				if got {
					positives++
				}
			}
			if tt.someNegative && positives == 20000 {
				t.Fatal("every key never added tested positive")
			}
			if tt.somePositive && positives == 0 {
				t.Fatal("no key never added tested positive: no false positive was compared")
			}
		})
	}
}
