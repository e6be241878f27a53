package rowio

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// limitAllocator is the allocator of an Arrow IPC reader of untrusted
// input. The reader sizes message bodies and decompressed buffers from
// lengths the stream declares; the allocator refuses (by panicking with an
// ErrLimit error, which Recover turns back into an error) any buffer or
// total over the limits instead of letting one message exhaust memory.
//
// With recycle set (Reader.RecycleBuffers), it also reuses the buffers
// of record batches the reader has released (a few of each power-of-two
// size): reading a 10M-row stream allocated a fresh, zeroed buffer for
// every column of every batch, and the garbage collections and page
// faults of that took most of the reading time. Recycled buffers are not
// zeroed: the reader overwrites what it asks for.
type limitAllocator struct {
	mem       memory.Allocator
	one, live int64
	used      atomic.Int64

	recycle atomic.Bool
	mu      sync.Mutex
	free    [64][][]byte // by log2 of the capacity
}

// keepFree is how many released buffers of one size are kept.
const keepFree = 8

// sizeClass is the power-of-two capacity a buffer of size bytes gets,
// and its log2.
func sizeClass(size int) (int, int) {
	k := 6
	if size > 64 {
		k = bits.Len(uint(size - 1))
	}
	return 1 << k, k
}

func newLimitAllocator(lim Limits) *limitAllocator {
	return &limitAllocator{mem: memory.DefaultAllocator, one: lim.MaxArrowBuffer, live: lim.MaxArrowLive}
}

// check refuses a buffer of size bytes that adds grow bytes to the total.
func (a *limitAllocator) check(size, grow int) {
	if int64(size) > a.one || size < 0 {
		panic(fmt.Errorf("%w: an Arrow message declares a %d-byte buffer (limit %d)", ErrLimit, size, a.one))
	}
	if used := a.used.Load() + int64(grow); used > a.live {
		panic(fmt.Errorf("%w: the Arrow stream needs over %d bytes at once", ErrLimit, a.live))
	}
}

// Allocate returns a buffer of size bytes, recycled when one is free.
func (a *limitAllocator) Allocate(size int) []byte {
	if !a.recycle.Load() {
		a.check(size, size)
		b := a.mem.Allocate(size)
		a.used.Add(int64(cap(b)))
		return b
	}
	c, k := sizeClass(size)
	a.check(size, c)
	a.used.Add(int64(c))
	a.mu.Lock()
	if n := len(a.free[k]); n > 0 {
		b := a.free[k][n-1]
		a.free[k] = a.free[k][:n-1]
		a.mu.Unlock()
		return b[:size]
	}
	a.mu.Unlock()
	return a.mem.Allocate(c)[:size]
}

// Reallocate grows or shrinks b to size bytes, keeping its content.
func (a *limitAllocator) Reallocate(size int, b []byte) []byte {
	if !a.recycle.Load() {
		a.check(size, size-cap(b))
		old := cap(b)
		b = a.mem.Reallocate(size, b)
		a.used.Add(int64(cap(b) - old))
		return b
	}
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free takes a buffer back, keeping it for reuse if there is room.
func (a *limitAllocator) Free(b []byte) {
	a.used.Add(-int64(cap(b)))
	if c, k := sizeClass(cap(b)); a.recycle.Load() && c == cap(b) {
		a.mu.Lock()
		if len(a.free[k]) < keepFree {
			a.free[k] = append(a.free[k], b[:0])
		}
		a.mu.Unlock()
	}
}
