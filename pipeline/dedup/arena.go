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
	free   []agg   // the unused rest of the last chunk
	sfree  []int32 // the same for slot arrays
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

// slots returns a zeroed slot array of n entries, also from huge-page
// mappings: a table's slots are read at random like its aggregates, and
// from the Go heap's 4 KiB pages most lookups of a large batch missed the
// TLB. Arrays are cut one after the other and never reused: freeSlots
// gives their pages back to the kernel instead, so the arrays a growing
// table leaves behind cost address space, not memory.
func (a *arena) slots(n int) []int32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.sfree) < n {
		size := max(arenaChunk, (n*4+hugePage-1)/hugePage*hugePage)
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			return make([]int32, n)
		}
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
		a.chunks = append(a.chunks, b)
		a.sfree = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), size/4)
	}
	s := a.sfree[:n:n]
	a.sfree = a.sfree[n:]
	return s
}

// hugePage is the size of a transparent huge page on amd64 and arm64
// with 4 KiB base pages.
const hugePage = 2 << 20

// freeSlots returns the whole pages inside s to the kernel (s came from
// slots, or from the Go heap where mmap failed); s must not be used after.
func (a *arena) freeSlots(s []int32) {
	if len(s) == 0 {
		return
	}
	const page = 4096
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	end := start + uintptr(len(s))*4
	lo, hi := (start+page-1)&^(page-1), end&^(page-1)
	if hi <= lo || !a.owns(start) {
		return
	}
	first := unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)
	_ = unix.Madvise(unsafe.Slice((*byte)(first), hi-lo), unix.MADV_DONTNEED)
}

// owns reports whether p is inside one of a's mappings.
func (a *arena) owns(p uintptr) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.chunks {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		if p >= base && p < base+uintptr(len(c)) {
			return true
		}
	}
	return false
}
