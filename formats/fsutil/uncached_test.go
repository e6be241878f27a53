package fsutil

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"golang.org/x/sys/unix"
)

// TestUncachedWritesWhatItIsGiven writes files of sizes around the block
// and buffer boundaries, in chunks of several sizes, with O_DIRECT and
// without, and reads each back.
func TestUncachedWritesWhatItIsGiven(t *testing.T) {
	const buf = UncachedBuffer
	sizes := map[string]int{
		"empty": 0, "one byte": 1, "block less one": blockAlign - 1, "one block": blockAlign,
		"block and one": blockAlign + 1, "buffer less one": buf - 1, "one buffer": buf,
		"buffer and one": buf + 1, "many buffers and a tail": 3*buf + 12345,
	}
	chunks := map[string]int{"1 B": 1, "1000 B": 1000, "a buffer and 3 B": buf + 3}
	// Each chunk given to Write, or read by ReadFrom from a reader of it.
	takes := map[string]func(u *Uncached, b []byte) (int, error){
		"Write": func(u *Uncached, b []byte) (int, error) { return u.Write(b) },
		"ReadFrom": func(u *Uncached, b []byte) (int, error) {
			n, err := u.ReadFrom(bytes.NewReader(b))
			return int(n), err
		},
	}
	dir := t.TempDir()
	for sname, size := range sizes {
		for cname, chunk := range chunks {
			for tname, take := range takes {
				for _, direct := range []bool{true, false} {
					name := sname + "/" + cname + "/" + tname
					if !direct {
						name += "/page cache"
					}
					t.Run(name, func(t *testing.T) {
						data := make([]byte, size)
						rng := rand.New(rand.NewPCG(uint64(size), uint64(chunk)))
						for i := range data {
							data[i] = byte(rng.Uint32())
						}
						p := filepath.Join(dir, "f")
						sum := crc32.New(crc32.MakeTable(crc32.Castagnoli))
						u, err := createUncached(p, sum, direct)
						if err != nil {
							t.Fatal(err)
						}
						for rest := data; len(rest) > 0; {
							n := min(chunk, len(rest))
							if k, err := take(u, rest[:n]); err != nil || k != n {
								t.Fatalf("%s = %d, %v; want %d", tname, k, err, n)
							}
							rest = rest[n:]
						}
						if u.Size() != int64(size) {
							t.Fatalf("Size = %d, want %d", u.Size(), size)
						}
						if err := u.Close(); err != nil {
							t.Fatal(err)
						}
						got, err := os.ReadFile(p)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got, data) {
							t.Fatalf("read back %d bytes, differing from the %d written", len(got), len(data))
						}
						if want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)); sum.Sum32() != want {
							t.Fatalf("checksum %08x, want %08x", sum.Sum32(), want)
						}
						if !direct && u.directN != 0 {
							t.Fatalf("%d bytes written with O_DIRECT, want none", u.directN)
						}
						if _, err := take(u, []byte{1}); !errors.Is(err, fs.ErrClosed) {
							t.Fatalf("%s after Close: %v, want ErrClosed", tname, err)
						}
					})
				}
			}
		}
	}
}

// TestUncachedReadFromError: ReadFrom returns its reader's error, and the
// bytes read before it are in the file.
func TestUncachedReadFromError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	u, err := CreateUncached(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), UncachedBuffer/5) // two buffers
	bad := errors.New("read failed")
	n, err := u.ReadFrom(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(bad)))
	if err != bad || n != int64(len(data)) {
		t.Fatalf("ReadFrom = %d, %v; want %d, %v", n, err, len(data), bad)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d read before the error", len(got), err, len(data))
	}
}

// TestUncachedGoesDirect checks which bytes are written with O_DIRECT
// where the file system takes it (the point of Uncached): a file's whole
// buffers and the whole blocks of its tail, but nothing of a file smaller
// than a buffer.
func TestUncachedGoesDirect(t *testing.T) {
	cases := map[string]struct {
		size       int
		wantDirect int64
	}{
		"under a buffer":               {UncachedBuffer - 1, 0},
		"a buffer":                     {UncachedBuffer, UncachedBuffer},
		"buffers and a tail of blocks": {2*UncachedBuffer + 3*blockAlign + 10, 2*UncachedBuffer + 3*blockAlign},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := CreateUncached(filepath.Join(t.TempDir(), "f"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Write(make([]byte, c.size)); err != nil {
				t.Fatal(err)
			}
			if err := u.Close(); err != nil {
				t.Fatal(err)
			}
			if c.wantDirect > 0 && u.directN == 0 && !u.mayDirect {
				t.Skip("the test's file system refuses O_DIRECT: written through the page cache")
			}
			if u.directN != c.wantDirect {
				t.Fatalf("%d bytes written with O_DIRECT, want %d", u.directN, c.wantDirect)
			}
		})
	}
}

// TestUncachedWriteErrors: a failing write (ENOSPC from /dev/full, which
// refuses O_DIRECT too) is reported by Write or Close, naming the file,
// for a file of whole buffers and for one under a block; Abort after it
// returns.
func TestUncachedWriteErrors(t *testing.T) {
	for name, size := range map[string]int{"whole buffers": 4 * UncachedBuffer, "a tail": 100} {
		t.Run(name, func(t *testing.T) {
			u, err := CreateUncached("/dev/full", nil)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			_, werr := u.Write(make([]byte, size))
			if werr != nil {
				u.Abort()
			} else {
				werr = u.Close()
			}
			pe := (*fs.PathError)(nil)
			if !errors.Is(werr, unix.ENOSPC) || !errors.As(werr, &pe) || pe.Path != "/dev/full" {
				t.Fatalf("error %v, want ENOSPC naming /dev/full", werr)
			}
		})
	}
}
