package dedup

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
)

// blockBits sizes the blocks aggregates are stored in: growing a table
// never copies its aggregates, so peak memory stays near what they need.
const blockBits = 12

// table is an open-addressing hash table of aggregates for one partition.
// Infohashes are uniformly random, so their bytes are the hash.
//
// A slot holds 1 + the index of an aggregate, 0 when empty. While a table
// has at most 1<<15 aggregates its slots are 16-bit (slots16): at 10M
// observations of 2M hashes that is 8 MB, a twentieth of the peak memory.
// Past that they are 32-bit (slots). Either is a view of mem.
type table struct {
	slots   []int32
	slots16 []uint16
	mem     []int32 // the slot array's memory, from the arena
	nslots  int     // slots in the array, whichever its width
	blocks  [][]agg
	n       int
	arena   *arena // where blocks come from (shared by the batch's tables)
	// peers are the partition's announcements (peers.go); the first
	// peersKept of them are compacted.
	peers     []peerRec
	peersKept int
	peerAt    []int32 // after compactPeers: aggregate k's records are peers[peerAt[k]:peerAt[k+1]]
	// anns are the hashes' newest announce_peer observations, when the
	// batch keeps them (batch.trackAnn; aggann.go).
	anns map[schema.Hash]int64
}

// maxNarrowSlots is the most slots a table with 16-bit slots has: it
// grows at half full, so it never holds more than 1<<15 aggregates.
const maxNarrowSlots = 1 << 16

// narrow reports whether the table's slots are 16-bit.
func (t *table) narrow() bool { return t.slots16 != nil }

func (t *table) slot(i uint64) int {
	if t.slots16 != nil {
		return int(t.slots16[i])
	}
	return int(t.slots[i])
}

func (t *table) setSlot(i uint64, v int) {
	if t.slots16 != nil {
		t.slots16[i] = uint16(v)
	} else {
		t.slots[i] = int32(v)
	}
}

func (t *table) slotAddr(i uint64) uintptr {
	if t.slots16 != nil {
		return uintptr(unsafe.Pointer(&t.slots16[i]))
	}
	return uintptr(unsafe.Pointer(&t.slots[i]))
}

// slotKey is the part of a hash the table's slots are chosen by.
func slotKey(h *schema.Hash) uint64 { return binary.LittleEndian.Uint64(h[4:12]) }

func (t *table) at(i int) *agg { return &t.blocks[i>>blockBits][i&(1<<blockBits-1)] }

// find returns h's aggregate, its index, and whether it was there (else
// it is new, zero but for its hash).
func (t *table) find(h *schema.Hash) (*agg, int, bool) {
	if t.n*2 >= t.nslots {
		t.grow()
	}
	mask := uint64(t.nslots - 1)
	k := slotKey(h)
	i := k & mask
	for {
		s := t.slot(i)
		if s == 0 {
			if t.n>>blockBits == len(t.blocks) {
				t.blocks = append(t.blocks, t.arena.block())
			}
			a := t.at(t.n)
			a.h = *h
			t.n++
			t.setSlot(i, t.n)
			return a, t.n - 1, false
		}
		// Compare 8 bytes first: a random mismatch almost always differs
		// there. Then the rest as words (a.h == *h called memequal).
		if a := t.at(s - 1); binary.LittleEndian.Uint64(a.h[4:12]) == k && sameHash(&a.h, h) {
			return a, s - 1, true
		}
		i = (i + 1) & mask
	}
}

// sameHash reports whether x and y, whose bytes 4 to 12 are equal, are
// the same hash.
func sameHash(x, y *schema.Hash) bool {
	return binary.LittleEndian.Uint64(x[12:20]) == binary.LittleEndian.Uint64(y[12:20]) &&
		binary.LittleEndian.Uint32(x[0:4]) == binary.LittleEndian.Uint32(y[0:4])
}

func (t *table) grow() {
	n := max(64, 2*t.nslots)
	words := n // 32-bit words of the new slot array
	if n <= maxNarrowSlots {
		words = n / 2
	}
	defer t.arena.freeSlots(t.mem)
	t.mem, t.nslots = t.arena.slots(words), n
	t.slots, t.slots16 = nil, nil
	if n <= maxNarrowSlots {
		t.slots16 = unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(t.mem))), n)
	} else {
		t.slots = t.mem
	}
	mask := uint64(n - 1)
	for k := 0; k < t.n; k++ {
		i := slotKey(&t.at(k).h) & mask
		for t.slot(i) != 0 {
			i = (i + 1) & mask
		}
		t.setSlot(i, k+1)
	}
}

// entryBefore orders entries sharing their first two bytes (at least) by
// the following 8 bytes as one big-endian word, then the rest.
func entryBefore(x, y entry) bool {
	kx, ky := binary.BigEndian.Uint64(x.h[2:10]), binary.BigEndian.Uint64(y.h[2:10])
	if kx != ky {
		return kx < ky
	}
	return bytes.Compare(x.h[10:], y.h[10:]) < 0
}
