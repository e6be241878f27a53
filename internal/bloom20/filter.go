package bloom20

import "github.com/bits-and-blooms/bloom/v3"

// Filter adds and tests keys in a bloom.BloomFilter (see the package
// doc). It shares the filter's words: a key added through either is in
// both. It holds the filter's m and k as they were when Of made it.
type Filter struct {
	words []uint64
	k     uint
	mod   Mod
	// lib is the filter itself when its bitset is shorter than m bits
	// (bloom.From with too few words, which its Add would extend): then
	// the library's own Add and Test are used.
	lib *bloom.BloomFilter
}

// Of returns the Filter of bf.
func Of(bf *bloom.BloomFilter) Filter {
	m := uint64(bf.Cap())
	words := bf.BitSet().Words()
	if uint64(bf.BitSet().Len()) < m || uint64(len(words)) < (m+63)/64 {
		return Filter{lib: bf}
	}
	return Filter{words: words, k: bf.K(), mod: NewMod(m)}
}

// Locations returns the library's Locations(key, k) (its hash functions'
// values before they are taken modulo m).
func Locations(key *[20]byte, k uint) []uint64 {
	h := Hashes(key)
	locs := make([]uint64, k)
	for i := range locs {
		locs[i] = location(&h, uint64(i))
	}
	return locs
}

// location is the library's i-th location of a key whose base hashes
// are h.
func location(h *[4]uint64, i uint64) uint64 {
	return h[i%2] + i*h[2+(((i+i%2)%4)/2)]
}

// Add adds key, as the library's Add(key[:]).
func (f *Filter) Add(key *[20]byte) {
	if f.lib != nil {
		f.lib.Add(key[:])
		return
	}
	h := Hashes(key)
	words, r := f.words, f.mod
	for i := range uint64(f.k) {
		l := r.Reduce(location(&h, i))
		words[l>>6] |= 1 << (l & 63)
	}
}

// Test reports whether key may be in the filter, as the library's
// Test(key[:]).
func (f *Filter) Test(key *[20]byte) bool {
	if f.lib != nil {
		return f.lib.Test(key[:])
	}
	h := Hashes(key)
	words, r := f.words, f.mod
	for i := range uint64(f.k) {
		l := r.Reduce(location(&h, i))
		if words[l>>6]&(1<<(l&63)) == 0 {
			return false
		}
	}
	return true
}
