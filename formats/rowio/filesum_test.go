package rowio

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFileSummer: whatever the reads since Start (in order, out of order,
// overlapping, read twice, a few or none at all), Check passes on the
// file the sum was taken of and fails, naming the file, on one with a
// byte changed, read or not; reads before Start do not count.
func TestFileSummer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	want := FileSum{Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}
	type read struct{ off, n int }
	random := func(k, maxLen int) []read {
		var rs []read
		for range k {
			off := rng.IntN(len(data))
			rs = append(rs, read{off, min(1+rng.IntN(maxLen), len(data)-off)})
		}
		return rs
	}
	var seq []read
	for at := 0; at < len(data); at += 4096 {
		seq = append(seq, read{at, min(4096, len(data)-at)})
	}
	backwards := make([]read, len(seq))
	for i := range seq {
		backwards[i] = seq[len(seq)-1-i]
	}
	for _, tc := range []struct {
		name  string
		reads []read
	}{
		{"no read", nil},
		{"in order", seq},
		{"backwards", backwards},
		{"random, overlapping", random(200, 5000)},
		{"random, small", random(2000, 50)},
		{"twice over", append(append([]read(nil), seq...), seq...)},
		{"the whole at once", []read{{0, len(data)}}},
	} {
		for _, damaged := range []bool{false, true} {
			name := tc.name
			if damaged {
				name += ", damaged"
			}
			t.Run(name, func(t *testing.T) {
				b := bytes.Clone(data)
				if damaged {
					b[rng.IntN(len(b))] ^= 0x04
				}
				s := NewFileSummer(bytes.NewReader(b), int64(len(b)), "/d/x.parquet", want)
				p := make([]byte, len(b))
				s.ReadAt(p[:1000], 0) // before Start: not summed
				s.Start()
				for _, r := range tc.reads {
					if n, err := s.ReadAt(p[:r.n], int64(r.off)); n != r.n {
						t.Fatalf("ReadAt(%d, %d): %d, %v", r.n, r.off, n, err)
					}
				}
				for k := 1; k < len(s.spans); k++ {
					if s.spans[k].at < s.spans[k-1].end {
						t.Fatalf("spans overlap: %+v", s.spans)
					}
				}
				err := s.Check()
				if !damaged {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if fe, ok := errors.AsType[*FooterError](err); !ok || !strings.Contains(err.Error(), "/d/x.parquet: CRC-32C ") ||
					!strings.Contains(fe.What, "the manifest says") {
					t.Fatalf("Check: %v, want a FooterError naming the file's CRC-32C", err)
				}
			})
		}
	}
}

// TestFileSummerSize: a file of another size than the manifest records
// fails Check; a FileSummer of an unrecorded sum is nil and checks
// nothing.
func TestFileSummerSize(t *testing.T) {
	data := []byte("PAR1 some bytes PAR1")
	s := NewFileSummer(bytes.NewReader(data), int64(len(data)), "/d/x.parquet", FileSum{Size: 21, CRC32C: 1})
	s.Start()
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "20 bytes, the manifest says 21") {
		t.Fatalf("Check: %v", err)
	}
	var none *FileSummer = NewFileSummer(bytes.NewReader(data), int64(len(data)), "/d/x.parquet", FileSum{})
	if none != nil {
		t.Fatal("a FileSummer of an unrecorded sum")
	}
	none.Start()
	if err := none.Check(); err != nil {
		t.Fatal(err)
	}
}

// countingReader counts the reads of r.
type countingReader struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestFileSummerCheckReads: Check reads each span no read covered at
// once (up to 1 MiB a read), a short one first or not: it used to read a
// longer span after a short one in pieces of the short one's length.
func TestFileSummerCheckReads(t *testing.T) {
	data := make([]byte, 10_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	want := FileSum{Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}
	c := &countingReader{r: bytes.NewReader(data)}
	s := NewFileSummer(c, int64(len(data)), "/d/x.parquet", want)
	s.Start()
	p := make([]byte, 6000)
	s.ReadAt(p[:6000], 4) // a Parquet file's layout: the magic and the footer unread
	c.reads = 0
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if c.reads != 2 {
		t.Fatalf("Check read %d times the 2 spans no read covered", c.reads)
	}
}
