package rowio

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// limitAllocator is the allocator of an Arrow IPC reader of untrusted
// input. The reader sizes message bodies and decompressed buffers from
// lengths the stream declares; the allocator refuses (by panicking with an
// ErrLimit error, which Recover turns back into an error) any buffer or
// total over the limits instead of letting one message exhaust memory.
type limitAllocator struct {
	mem       memory.Allocator
	one, live int64
	used      atomic.Int64
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

func (a *limitAllocator) Allocate(size int) []byte {
	a.check(size, size)
	b := a.mem.Allocate(size)
	a.used.Add(int64(cap(b)))
	return b
}

func (a *limitAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size, size-cap(b))
	old := cap(b)
	b = a.mem.Reallocate(size, b)
	a.used.Add(int64(cap(b) - old))
	return b
}

func (a *limitAllocator) Free(b []byte) {
	a.used.Add(-int64(cap(b)))
	a.mem.Free(b)
}
