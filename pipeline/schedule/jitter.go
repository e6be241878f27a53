package schedule

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// Domain constants keep the jitter and tie-break hashes independent.
const (
	jitterDomain     = 0x6a09e667f3bcc908
	tieDomain        = 0xbb67ae8584caa73b
	reactivateDomain = 0x3c6ef372fe94f82b
	deferDomain      = 0xa54ff53a5f1d36f1 // a deferral's spread (ApplyDeferral)
)

// mix64 is the splitmix64 finalizer: a cheap bijection whose output bits
// each depend on every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hashKey mixes all 20 bytes of h with n and seed.
func hashKey(h schema.Hash, n uint64, seed uint64) uint64 {
	x := mix64(seed)
	x = mix64(x ^ binary.LittleEndian.Uint64(h[0:8]))
	x = mix64(x ^ binary.LittleEndian.Uint64(h[8:16]))
	x = mix64(x ^ uint64(binary.LittleEndian.Uint32(h[16:20])))
	return mix64(x ^ n)
}

// unitHash is hashKey(h, n, seed) as a uniform draw in [0, 1).
func unitHash(h schema.Hash, n uint64, seed uint64) float64 {
	return float64(hashKey(h, n, seed)>>11) / (1 << 53)
}

// JitterFactor is the multiplier applied to the delay after attempt number
// attempt of hash h: 1 + j·(2u−1) with u uniform in [0, 1) drawn from a
// hash of (h, attempt, p.Seed). The same inputs always give the same
// factor; neighbouring hashes or attempts give unrelated ones.
func JitterFactor(p Policy, h schema.Hash, attempt int32) float64 {
	u := unitHash(h, uint64(uint32(attempt)), p.Seed^jitterDomain)
	return 1 + p.Jitter*(2*u-1)
}

// jitteredMillis is d·JitterFactor in milliseconds, rounded.
func jitteredMillis(p Policy, d Duration, h schema.Hash, attempt int32) int64 {
	ms := float64(d) / float64(time.Millisecond) * JitterFactor(p, h, attempt)
	return int64(math.Round(ms))
}
