package fsutil

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseLater: a file closed with CloseLater has every byte written
// once then is called, and its checksum is complete when CloseLater
// returns; before it, TailAt serves the file's last bytes from memory
// (the buffer being filled and the one before it) and refuses older ones.
func TestCloseLater(t *testing.T) {
	const buf = UncachedBuffer
	cases := map[string]struct {
		size   int
		tail   []int // TailAt lengths (from the end) that are in memory
		refuse int   // a length from the end that is not (0: none)
	}{
		"small":                  {size: 1000, tail: []int{8, 1000}},
		"a buffer and a tail":    {size: buf + 5000, tail: []int{8, 5000, 5001, buf + 5000}},
		"buffers and a tail":     {size: 3*buf + 12345, tail: []int{12345, 12346, buf + 12345}, refuse: buf + 12346},
		"whole buffers, no tail": {size: 2 * buf, tail: []int{1, buf}, refuse: buf + 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			data := make([]byte, c.size)
			for i := range data {
				data[i] = byte(i * 7 / 5)
			}
			p := filepath.Join(t.TempDir(), "f")
			sum := crc32.New(crc32.MakeTable(crc32.Castagnoli))
			u, err := CreateUncached(p, sum)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Write(data); err != nil {
				t.Fatal(err)
			}
			for _, k := range c.tail {
				got := make([]byte, k)
				if !u.TailAt(got, int64(c.size-k)) || !bytes.Equal(got, data[c.size-k:]) {
					t.Fatalf("TailAt of the last %d bytes: not in memory or wrong", k)
				}
			}
			if c.refuse > 0 && u.TailAt(make([]byte, c.refuse), int64(c.size-c.refuse)) {
				t.Fatalf("TailAt of the last %d bytes: served from memory, want refused", c.refuse)
			}
			done := make(chan error, 1)
			u.CloseLater(func(err error) { done <- err })
			if want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)); sum.Sum32() != want {
				t.Fatalf("checksum after CloseLater %08x, want %08x", sum.Sum32(), want)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
			}
		})
	}
}

// TestCloseLaterError: a write that fails in the background (ENOSPC from
// /dev/full) is the error then gets, naming the file. (A file of
// whole buffers may fail in Write already: its writer goroutine runs
// along.)
func TestCloseLaterError(t *testing.T) {
	for name, size := range map[string]int{"a buffer less one": UncachedBuffer - 1, "a tail": 100} {
		t.Run(name, func(t *testing.T) {
			u, err := CreateUncached("/dev/full", nil)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			if _, err := u.Write(make([]byte, size)); err != nil {
				u.Abort()
				t.Fatalf("Write: %v; want the error after CloseLater", err)
			}
			done := make(chan error, 1)
			u.CloseLater(func(err error) { done <- err })
			werr := <-done
			pe := (*os.PathError)(nil)
			if !errors.Is(werr, unix.ENOSPC) || !errors.As(werr, &pe) || pe.Path != "/dev/full" {
				t.Fatalf("error %v, want ENOSPC naming /dev/full", werr)
			}
		})
	}
}

// TestTailAtAfterQuickWriter: when the writer goroutine is done with a
// buffer before flush picks the next one (a loaded machine: the flushing
// goroutine descheduled), that buffer is not filled again while TailAt
// may still read it. It failed in a CI run: TailAt over more than one
// buffer returned the new bytes in place of the old.
func TestTailAtAfterQuickWriter(t *testing.T) {
	old := handedOff
	handedOff = func(u *Uncached) {
		for deadline := time.Now().Add(5 * time.Second); len(u.free) == 0 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	t.Cleanup(func() { handedOff = old })
	for _, size := range []int{UncachedBuffer + 5000, 3*UncachedBuffer + 12345} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7 / 5)
		}
		u, err := CreateUncached(filepath.Join(t.TempDir(), "f"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := u.Write(data); err != nil {
			t.Fatal(err)
		}
		k := UncachedBuffer + size%UncachedBuffer // the last buffer written and the tail
		got := make([]byte, k)
		if !u.TailAt(got, int64(size-k)) || !bytes.Equal(got, data[size-k:]) {
			t.Fatalf("size %d: TailAt of the last %d bytes: not in memory or wrong", size, k)
		}
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
