package dedup

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/infohash/infohash/formats/dataset"
)

// sink takes writes as fsutil.Uncached does: copied (Write) or read
// straight (ReadFrom) into a 1 MiB buffer bound for the disk.
type sink struct {
	buf []byte
	n   int
}

func (s *sink) Write(p []byte) (int, error) {
	for len(p) > 0 {
		if s.n == len(s.buf) {
			s.n = 0
		}
		c := copy(s.buf[s.n:], p)
		s.n += c
		p = p[c:]
	}
	return 0, nil
}

func (s *sink) ReadFrom(r io.Reader) (int64, error) {
	var t int64
	for {
		if s.n == len(s.buf) {
			s.n = 0
		}
		c, err := r.Read(s.buf[s.n:])
		s.n += c
		t += int64(c)
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
	}
}

// BenchmarkBloomCodec: a partition's filter of a 20M-hash state (78k
// hashes, 186 KB), read and checked then decoded, and encoded, by the
// library's ReadFrom/WriteTo and by readBloom/bloomEncoder.
func BenchmarkBloomCodec(b *testing.B) {
	f := codecFilters()["partition"]
	lib := libBytes(b, f)
	p := filepath.Join(b.TempDir(), "f.bloom")
	if err := os.WriteFile(p, lib, 0o644); err != nil {
		b.Fatal(err)
	}
	fi := fileInfoOf(lib)
	b.Run("load/library", func(b *testing.B) {
		b.SetBytes(int64(len(lib)))
		for b.Loop() {
			c, err := os.ReadFile(p)
			if err == nil {
				err = dataset.CheckBytes(c, fi)
			}
			if err == nil {
				_, err = (&bloom.BloomFilter{}).ReadFrom(bytes.NewReader(c))
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load/direct", func(b *testing.B) {
		b.SetBytes(int64(len(lib)))
		var buf []uint64
		for b.Loop() {
			if _, err := readBloom(p, fi, &buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	s := &sink{buf: make([]byte, 1<<20)}
	b.Run("encode/library", func(b *testing.B) {
		b.SetBytes(int64(len(lib)))
		for b.Loop() {
			f.WriteTo(s)
		}
	})
	b.Run("encode/direct", func(b *testing.B) {
		b.SetBytes(int64(len(lib)))
		for b.Loop() {
			io.Copy(s, newBloomEncoder(f))
		}
	})
}
