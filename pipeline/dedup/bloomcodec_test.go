package dedup

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// libBytes is f as the library's WriteTo writes it.
func libBytes(t testing.TB, f *bloom.BloomFilter) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// encBytes is f as bloomEncoder reads it.
func encBytes(t testing.TB, f *bloom.BloomFilter) []byte {
	t.Helper()
	b, err := io.ReadAll(newBloomEncoder(f))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// codecFilters are filters of the sizes dedup makes and of edge sizes:
// m not a multiple of 64, one word, a bitset longer than m (From).
func codecFilters() map[string]*bloom.BloomFilter {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(f *bloom.BloomFilter, n int) *bloom.BloomFilter {
		var h schema.Hash
		for range n {
			for j := range h {
				h[j] = byte(rng.Uint32())
			}
			f.Add(h[:])
		}
		return f
	}
	return map[string]*bloom.BloomFilter{
		"partition":     fill(bloom.NewWithEstimates(2*78000, 0.01), 78000),
		"minimum empty": bloom.NewWithEstimates(minBloomCap, 0.01),
		"m 1":           fill(bloom.New(1, 1), 3),
		"m 64":          fill(bloom.New(64, 3), 5),
		"m 65":          fill(bloom.New(65, 3), 5),
		"m 1000 k 9":    fill(bloom.New(1000, 9), 50),
		"from words":    fill(bloom.FromWithM(make([]uint64, 4), 200, 4), 20),
	}
}

// TestBloomCodecMatchesLibrary: the library's bytes decode to the same
// filter and encode back to the same bytes, and ours read back through
// the library's ReadFrom to the same filter.
func TestBloomCodecMatchesLibrary(t *testing.T) {
	for name, f := range codecFilters() {
		t.Run(name, func(t *testing.T) {
			lib := libBytes(t, f)
			if enc := encBytes(t, f); !bytes.Equal(enc, lib) {
				t.Fatalf("encoder wrote %d bytes, WriteTo %d, not the same", len(enc), len(lib))
			}
			got, err := decodeBloom(lib, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(f) || got.BitSet().Len() != f.BitSet().Len() {
				t.Fatalf("decoded m %d k %d len %d, want m %d k %d len %d (or other bits)",
					got.Cap(), got.K(), got.BitSet().Len(), f.Cap(), f.K(), f.BitSet().Len())
			}
			if again := encBytes(t, got); !bytes.Equal(again, lib) {
				t.Fatal("decoded filter encodes to other bytes")
			}
			if again := libBytes(t, got); !bytes.Equal(again, lib) {
				t.Fatal("decoded filter's WriteTo writes other bytes")
			}
			back := &bloom.BloomFilter{}
			if _, err := back.ReadFrom(bytes.NewReader(encBytes(t, f))); err != nil {
				t.Fatal(err)
			}
			if !back.Equal(f) || back.BitSet().Len() != f.BitSet().Len() {
				t.Fatal("ReadFrom of the encoder's bytes is another filter")
			}
			// Read in pieces of every size (words split between reads).
			if err := iotest.TestReader(newBloomEncoder(f), lib); err != nil {
				t.Fatal(err)
			}
			one, err := io.ReadAll(iotest.OneByteReader(newBloomEncoder(f)))
			if err != nil || !bytes.Equal(one, lib) {
				t.Fatalf("read a byte at a time: %v, equal %v", err, bytes.Equal(one, lib))
			}
		})
	}
}

// TestDecodeBloomInPlace: decoding into the file's own memory, as
// readBloom does, gives the same filter.
func TestDecodeBloomInPlace(t *testing.T) {
	f := codecFilters()["partition"]
	lib := libBytes(t, f)
	words := make([]uint64, (len(lib)+7)/8)
	b := wordBytes(words)[:len(lib)]
	copy(b, lib)
	got, err := decodeBloom(b, words)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(f) || !bytes.Equal(encBytes(t, got), lib) {
		t.Fatal("in-place decode gives another filter")
	}
}

// header is a filter file's header with the given fields and n words.
func header(m, k, length uint64, n int) []byte {
	b := make([]byte, bloomHeader+8*n)
	binary.BigEndian.PutUint64(b, m)
	binary.BigEndian.PutUint64(b[8:], k)
	binary.BigEndian.PutUint64(b[16:], length)
	return b
}

// TestDecodeBloomDamaged: a truncated or inconsistent filter is an error
// that says what is wrong, never a filter that answers "surely new" of a
// hash it holds, nor a panic.
func TestDecodeBloomDamaged(t *testing.T) {
	good := libBytes(t, codecFilters()["m 1000 k 9"])
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated Bloom filter: 0 bytes, its header alone is 24"},
		{"half a header", good[:12], "truncated Bloom filter: 12 bytes"},
		{"header only", good[:bloomHeader], "0 bytes of bitset, its 1000 bits take 16 words"},
		{"a word short", good[:len(good)-8], "120 bytes of bitset, its 1000 bits take 16 words"},
		{"a byte short", good[:len(good)-1], "127 bytes of bitset"},
		{"a byte over", append(append([]byte(nil), good...), 0), "129 bytes of bitset"},
		{"m 0", header(0, 1, 64, 1), "m is 0 bits"},
		{"k 0", header(64, 0, 64, 1), "k is 0 for m 64 bits"},
		{"k above m", header(64, 65, 64, 1), "k is 65 for m 64 bits"},
		{"bitset shorter than m", header(128, 3, 64, 1), "a bitset of 64 bits for m 128 bits"},
		{"length overflows", header(64, 3, 1<<63|1, 1), "its 9223372036854775809 bits take 144115188075855873 words"},
		{"huge length", header(1<<62, 3, 1<<62, 0), "0 bytes of bitset, its 4611686018427387904 bits take 72057594037927936 words"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := decodeBloom(c.b, nil)
			if err == nil {
				t.Fatalf("decoded m %d k %d, want an error", f.Cap(), f.K())
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to say %q", err, c.want)
			}
		})
	}
}

// TestReadBloomChecksFile: readBloom refuses a filter file that is not
// the one the manifest describes, or that the manifest describes but
// cannot be a filter, and names what is wrong.
func TestReadBloomChecksFile(t *testing.T) {
	dir := t.TempDir()
	good := libBytes(t, codecFilters()["m 1000 k 9"])
	short := header(128, 3, 64, 1) // a bitset shorter than m: CRC right
	cases := []struct {
		name    string
		content []byte
		fi      dataset.FileInfo // Size and CRC32C; zero: good's
		want    string
	}{
		{"good", good, dataset.FileInfo{}, ""},
		{"longer than the manifest", append(append([]byte(nil), good...), 0, 0), dataset.FileInfo{}, "154 bytes, the manifest says 152"},
		{"shorter than the manifest", good[:100], dataset.FileInfo{}, "100 bytes, the manifest says 152"},
		{"flipped bit", flipBit(good, 77), dataset.FileInfo{}, "the content changed"},
		{"consistent but unsafe", short, fileInfoOf(short), "a bitset of 64 bits for m 128 bits"},
		{"odd size", good[:149], fileInfoOf(good[:149]), "125 bytes of bitset"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, c.content, 0o644); err != nil {
				t.Fatal(err)
			}
			fi := c.fi
			if fi.Size == 0 {
				fi = fileInfoOf(good)
			}
			buf := make([]uint64, i) // too short, then reused: grown either way
			f, err := readBloom(p, fi, &buf)
			if c.want == "" {
				if err != nil || !bytes.Equal(encBytes(t, f), good) {
					t.Fatalf("read %v, want the filter written", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to say %q", err, c.want)
			}
		})
	}
}

func flipBit(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 1
	return c
}

// fileInfoOf is a manifest's entry for a file holding b.
func fileInfoOf(b []byte) dataset.FileInfo {
	fi := dataset.FileInfo{Size: int64(len(b))}
	fi.CRC32C = crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return fi
}

// TestBloomAddAllocates: adding or testing a hash allocates nothing (the
// library hashes the slice as it is), so there is nothing to save there.
func TestBloomAddAllocates(t *testing.T) {
	f := bloom.NewWithEstimates(10000, 0.01)
	var h schema.Hash
	if n := testing.AllocsPerRun(1000, func() {
		h[0]++
		f.Add(h[:])
		f.Test(h[:])
	}); n != 0 {
		t.Fatalf("Add and Test allocate %v times a hash", n)
	}
}

// FuzzDecodeBloom: any bytes decode to an error or to a filter that
// encodes back to the same bytes and that the library reads the same.
func FuzzDecodeBloom(f *testing.F) {
	for _, bf := range codecFilters() {
		if bf.Cap() < 5000 {
			f.Add(libBytes(f, bf))
		}
	}
	f.Add(header(64, 3, 64, 1))
	f.Add(header(128, 3, 64, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeBloom(b, nil)
		if err != nil {
			return
		}
		if enc := encBytes(t, got); !bytes.Equal(enc, b) {
			t.Fatalf("decoded %d bytes, encoded back %d, not the same", len(b), len(enc))
		}
		lib := &bloom.BloomFilter{}
		if _, err := lib.ReadFrom(bytes.NewReader(b)); err != nil {
			t.Fatalf("ReadFrom refuses what decodeBloom took: %v", err)
		}
		if !lib.Equal(got) || lib.BitSet().Len() != got.BitSet().Len() {
			t.Fatal("ReadFrom reads another filter")
		}
		var h schema.Hash
		got.Add(h[:]) // locations stay within the bitset
	})
}

// TestExtendNowHoldsTheNewHashes: the old filter extended by a batch's
// Bloom negatives (extendNow, right after the batch is tested) encodes to
// the bytes of the old filter extended by every new hash (negatives and
// false positives) after the batch was confirmed, as before; the batch is
// tested against the old filter only.
func TestExtendNowHoldsTheNewHashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	hash := func() (h schema.Hash) {
		for j := range h {
			h[j] = byte(rng.Uint32())
		}
		return h
	}
	for _, n := range []int{0, 1, 50, 2000} {
		old := bloom.NewWithEstimates(4000, 0.3) // many false positives
		var known []schema.Hash
		for range 1000 {
			h := hash()
			known = append(known, h)
			old.Add(h[:])
		}
		es := make([]entry, 0, n+len(known)/4)
		for range n {
			es = append(es, entry{agg{h: hash()}})
		}
		for _, h := range known[:len(known)/4] {
			es = append(es, entry{agg{h: h}})
		}
		isKnown := make(map[schema.Hash]bool)
		for _, h := range known {
			isKnown[h] = true
		}
		want := old.Copy()
		got := old.Copy()
		var cands []int
		falsePos := 0
		for i := range es {
			if got.Test(es[i].h[:]) {
				cands = append(cands, i)
				if !isKnown[es[i].h] {
					falsePos++
				}
			}
			if !isKnown[es[i].h] {
				want.Add(es[i].h[:])
			}
		}
		extendNow(got, es, cands)
		if !bytes.Equal(encBytes(t, got), libBytes(t, want)) {
			t.Fatalf("%d new hashes (%d false positives): extendNow's filter differs from adding every new hash", n, falsePos)
		}
		if n == 2000 && falsePos == 0 {
			t.Fatal("no false positive among 2000 new hashes: the test does not test them")
		}
	}
	extendNow(nil, []entry{{}}, nil) // no filter: nothing to do
}
