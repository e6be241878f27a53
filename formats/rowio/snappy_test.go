package rowio

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/s2"
)

// FuzzSnappyPrefix: the lazy Snappy decoder reads what s2 decodes from a
// valid block, every prefix of it alike, and never more than a block
// declares from an invalid one. A copy of offset 0, S2's repeat code that
// s2 decodes, is refused (testdata/fuzz: the fuzzer found one in 15 s).
func FuzzSnappyPrefix(f *testing.F) {
	for _, text := range [][]byte{nil, []byte("a"), bytes.Repeat([]byte("levels and values "), 500),
		append(bytes.Repeat([]byte{0}, 70000), []byte("0123456789abcdef0123456789abcdef")...)} {
		f.Add(s2.EncodeSnappy(nil, text), uint16(len(text)/3))
	}
	f.Add([]byte{0x05, 0x10, 'a', 'b', 'c', 'd', 'e'}, uint16(2))
	f.Add([]byte{0x08, 0x00, 'a', 0x1d, 0x01}, uint16(5)) // an overlapping copy
	f.Fuzz(func(t *testing.T, block []byte, k uint16) {
		var s snappyPrefix
		if err := s.reset(block); err != nil {
			return
		}
		got, err := io.ReadAll(&s)
		// A copy of 3 bytes yields at most 64: a block declaring more
		// than that allows cannot decode. s2.Decode would first allocate
		// what it declares (up to 2 GiB: the fuzzer stalled on such
		// inputs), so it is not asked.
		if n, derr := s2.DecodedLen(block); derr == nil && n > 22*len(block) {
			if err == nil {
				t.Fatalf("a block of %d bytes declaring %d decoded", len(block), n)
			}
			return
		}
		want, werr := s2.Decode(nil, block)
		if errors.Is(err, errS2Repeat) {
			return // s2 takes S2's extensions too; a Snappy page has none
		}
		if werr == nil && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("got %d bytes (%v), s2 decodes %d", len(got), err, len(want))
		}
		if err == nil && len(got) != s.size {
			t.Fatalf("read %d bytes of a block of %d", len(got), s.size)
		}
		if werr == nil {
			s.reset(block)
			pre := make([]byte, min(int(k), len(want)))
			if _, err := io.ReadFull(&s, pre); err != nil || !bytes.Equal(pre, want[:len(pre)]) {
				t.Fatalf("a prefix of %d bytes: %v", len(pre), err)
			}
		}
	})
}
