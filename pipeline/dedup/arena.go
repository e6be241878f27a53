package dedup

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// arena hands out the blocks the aggregation tables store aggregates in,
// from large anonymous mappings outside the Go heap that the kernel is
// asked to back with transparent huge pages:
//   - the tables are read at random (every observation touches one
//     aggregate): with 4 KiB pages a 100 MB table also misses the TLB on
//     almost every access; 2 MiB pages cover it;
//   - aggregates hold no pointers, and off the heap they are neither
//     scanned nor counted in the collector's GOGC headroom, which on 100 MB
//     of aggregates was 25 MB of peak memory.
//
// Blocks stay valid until release. Where mmap fails, blocks come from the
// Go heap.
type arena struct {
	mu     sync.Mutex
	chunks [][]byte
	free   []agg // the unused rest of the last chunk
}

// arenaChunk is the size of one mapping: a multiple of the 2 MiB huge
// page, large enough that mappings are few.
const arenaChunk = 64 << 20

// block returns a zeroed block of 1<<blockBits aggregates.
func (a *arena) block() []agg {
	const n = 1 << blockBits
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) < n {
		b, err := unix.Mmap(-1, 0, arenaChunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			return make([]agg, n)
		}
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint: without it, 4 KiB pages
		a.chunks = append(a.chunks, b)
		a.free = unsafe.Slice((*agg)(unsafe.Pointer(unsafe.SliceData(b))), arenaChunk/unsafe.Sizeof(agg{}))
	}
	blk := a.free[:n:n]
	a.free = a.free[n:]
	return blk
}

// release unmaps every chunk; no block may be used after it.
func (a *arena) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.chunks {
		unix.Munmap(c)
	}
	a.chunks, a.free = nil, nil
}
