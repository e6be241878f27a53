package bloom20

import (
	"encoding/binary"
	"math/bits"
)

// The MurmurHash3 x64-128 constants.
const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// Hashes returns the four base hashes bloom v3.7.1 derives from key (its
// baseHashes): MurmurHash3 x64-128 with seed 0 of the key's 20 bytes, then
// of the 21 bytes of the key and 0x01. Both inputs share the first 16-byte
// block; their tails are the key's last 4 bytes, and those with 0x01.
func Hashes(key *[20]byte) [4]uint64 {
	// The one block, mixed into h1 = h2 = 0.
	k1 := binary.LittleEndian.Uint64(key[0:8])
	k2 := binary.LittleEndian.Uint64(key[8:16])
	h1 := bits.RotateLeft64(mixK1(k1), 27)
	h1 = h1*5 + 0x52dce729
	h2 := bits.RotateLeft64(mixK2(k2), 31)
	h2 += h1
	h2 = h2*5 + 0x38495ab5
	tail := uint64(binary.LittleEndian.Uint32(key[16:20]))
	a, b := finish(h1^mixK1(tail), h2, 20)
	c, d := finish(h1^mixK1(tail|1<<32), h2, 21)
	return [4]uint64{a, b, c, d}
}

func mixK1(k uint64) uint64 {
	return bits.RotateLeft64(k*c1, 31) * c2
}

func mixK2(k uint64) uint64 {
	return bits.RotateLeft64(k*c2, 33) * c1
}

// finish is MurmurHash3 x64-128's finalisation of an input of n bytes.
func finish(h1, h2, n uint64) (uint64, uint64) {
	h1 ^= n
	h2 ^= n
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
