package dedup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/bits-and-blooms/bitset"
	"github.com/bits-and-blooms/bloom/v3"
)

// A filter on disk is what bloom's (*BloomFilter).WriteTo writes (v3.7.1,
// with bitset v1.24.2's default big-endian order): m (bits) and k (hash
// functions), then the bitset's length in bits, each a big-endian
// uint64, then the bitset's ceil(length/64) words, big-endian. ReadFrom
// and WriteTo went through binary.Read/Write and a 1 KiB buffer per 128
// words; decodeBloom and bloomEncoder convert between the file's bytes
// and the filter's words directly, byte for byte the same.
const bloomHeader = 24

// decodeBloom decodes filter file b into a filter whose bitset is
// dst[:words] (dst is grown if shorter). dst may be b's own memory (see
// wordBytes): word i is read from b[24+8i:] before word i is written.
// A filter that could answer "surely new" of a hash it holds (m or k 0,
// k above m, a bitset shorter than m bits), or whose bitset does not
// fill b exactly, is an error.
func decodeBloom(b []byte, dst []uint64) (*bloom.BloomFilter, error) {
	if len(b) < bloomHeader {
		return nil, fmt.Errorf("truncated Bloom filter: %d bytes, its header alone is %d", len(b), bloomHeader)
	}
	m := binary.BigEndian.Uint64(b)
	k := binary.BigEndian.Uint64(b[8:])
	length := binary.BigEndian.Uint64(b[16:])
	switch {
	case m == 0:
		return nil, errors.New("damaged Bloom filter: m is 0 bits")
	case k == 0 || k > m:
		return nil, fmt.Errorf("damaged Bloom filter: k is %d for m %d bits", k, m)
	case length < m:
		return nil, fmt.Errorf("damaged Bloom filter: a bitset of %d bits for m %d bits", length, m)
	}
	body := uint64(len(b) - bloomHeader)
	n := length/64 + min(length%64, 1)
	if body%8 != 0 || body/8 != n {
		return nil, fmt.Errorf("damaged Bloom filter: %d bytes of bitset, its %d bits take %d words", body, length, n)
	}
	if uint64(cap(dst)) < n {
		dst = make([]uint64, n)
	}
	words := dst[:n:n]
	src := b[bloomHeader:]
	for i := range words {
		words[i] = binary.BigEndian.Uint64(src[8*i:])
	}
	bf := bloom.FromWithM(words, uint(m), uint(k))
	// FromWithM's bitset is len(words)*64 bits long; WriteTo writes the
	// length read, as ReadFrom's filter would.
	*bf.BitSet() = *bitset.FromWithLength(uint(length), words)
	return bf, nil
}

// wordBytes is words' memory as bytes.
func wordBytes(words []uint64) []byte {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 8*len(words))
}

// bloomEncoder reads as a filter's WriteTo writes. Through io.Copy into
// a staged file (fsutil.Uncached, an io.ReaderFrom) it encodes the words
// straight into the buffer bound for the disk.
type bloomEncoder struct {
	hdr   [bloomHeader]byte
	words []uint64
	off   int // bytes read so far
}

func newBloomEncoder(bf *bloom.BloomFilter) *bloomEncoder {
	bs := bf.BitSet()
	n := bs.Len()
	e := &bloomEncoder{words: bs.Words()[:n/64+min(n%64, 1)]}
	binary.BigEndian.PutUint64(e.hdr[:], uint64(bf.Cap()))
	binary.BigEndian.PutUint64(e.hdr[8:], uint64(bf.K()))
	binary.BigEndian.PutUint64(e.hdr[16:], uint64(n))
	return e
}

// Read fills p with the encoding's next bytes; io.EOF once all are read.
func (e *bloomEncoder) Read(p []byte) (int, error) {
	total := bloomHeader + 8*len(e.words)
	n := 0
	for len(p) > 0 && e.off < total {
		var c int
		switch i, within := (e.off-bloomHeader)/8, (e.off-bloomHeader)%8; {
		case e.off < bloomHeader:
			c = copy(p, e.hdr[e.off:])
		case within != 0 || len(p) < 8: // a word split between reads
			var t [8]byte
			binary.BigEndian.PutUint64(t[:], e.words[i])
			c = copy(p, t[within:])
		default:
			ws := e.words[i:min(len(e.words), i+len(p)/8)]
			for j, w := range ws {
				binary.BigEndian.PutUint64(p[8*j:], w)
			}
			c = 8 * len(ws)
		}
		e.off += c
		n += c
		p = p[c:]
	}
	if e.off == total {
		return n, io.EOF
	}
	return n, nil
}
