package capture

import (
	"hash/maphash"
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/internal/reach"
)

// One sender's repeats are one sighting. A lookup asks the nodes near a
// hash get_peers and asks again when an answer is slow, and a hostile
// sender asks as often as it likes: every query recorded was a sighting,
// which dedup adds to the hash's seen_count and activity, and activity
// ranks what fetch tries (a sighting of a failed or cold hash pulls its
// retry forward). So one sender made a hash as busy as it wished. The
// recent set (the "process-local recent set" of BT9G's #17, the first
// dedup layer) records a sender's get_peers of a hash, and its
// announce_peer of it (another kind, recorded apart), once per window
// (Options.RepeatWindow): a repeat is answered as any query, not
// recorded (repeats_dropped counts it). The window runs from the query
// recorded: a sender that goes on asking is recorded again once it ends.
//
// A hash's get_peers are capped too, over all senders: get_peers needs
// no token, so a sender that forges source addresses is as many senders
// as it likes, each recorded once. So within a window (RepeatWindow, from
// the first one counted) a hash's get_peers that are no repeat are
// recorded up to Options.MaxSightingsPerHash times; those past it are
// answered, not recorded (hash_cap_dropped counts them), and the sender's
// repeats within its own window are still repeats. announce_peer is
// neither capped nor counted: its token is bound to the sender's address,
// so its senders must receive there (no forging), and it names a peer
// fetch may dial, which a flood of forged get_peers of the hash must not
// crowd out. The default, 32 a window, is one process's: a hash that many
// distinct nodes look up through one capture in 10 minutes is among the
// busiest it hears of (most hashes come once or twice), and at 32 a
// window it still ranks 16 to 32 times above those, and over a day of
// windows (a 24h half-life) about 6,700 in activity against a quiet
// hash's few; what it loses is the order among the busiest, which fetch
// takes first alike. A forger gets a hash no higher than them, not
// above, and only 32 sightings a window for the packets it sends.
// (On loopback and in a private range, where a sender is its address
// and port, a token serves every port of its address: there one host
// can announce as many senders; the networks a run is pointed into.)
// The cap's table (hashcap.go) is fixed, 2 MiB, mapped apart from the Go
// heap as the recent set's is and for its reasons, hashed with a seed of
// the run's; a new hash takes an empty or expired entry of its bucket,
// else the live one of fewest sightings: a flood of distinct hashes
// evicts hashes seen once, and a hash evicted only starts counting again
// (no memory grows; hash_cap_evicted counts the live entries evicted).
// Two live hashes of a bucket with one 20-bit fingerprint (about 1 new
// hash in 150,000) share a count. The get_peers and announce_peer of a
// fetch on the same --dht-state are left out before the recent set and
// the cap (ownlookups.go): they use up no hash's cap and fill no entry
// (but for the first ones of a fetch that saved a new ID within
// fetchIDsCheck, which the writer leaves out).
//
// A sender is its IP address alone on the Internet, where a host picks a
// new source port as it likes (hosts behind one NAT count as one: the
// stricter choice); on loopback, and in a private range the run was
// pointed into (internal/reach), its address and port: every node of a
// test network there may share one address.
//
// Memory is fixed, 16 MiB, whatever comes: recentBuckets buckets of
// recentWays entries of 8 bytes, a 32-bit fingerprint of the key (hashed
// with a seed of the run's, so no sender can aim at a bucket or a
// fingerprint) and the time it was recorded. The table is mapped apart
// from the Go heap (mmap): on the heap, its size also raised the
// collector's heap goal by as much (GOGC=100), and a flood's peak RSS
// grew by three times its size; mapped, only the pages written count, and a
// quiet run adds next to nothing. A new key takes an empty or
// expired entry of its bucket, else the oldest: a flood of distinct keys
// evicts, never grows the set, and a key evicted is merely recorded
// again, as every query was before. Two live keys of one bucket with one
// fingerprint (about 1 query in 500 million) drop one query that was no
// repeat.
//
// A live entry evicted (its bucket full of live ones) is counted
// (repeat_window_evicted): its key's repeats within the rest of its
// window are recorded again. The table holds 2,097,152 keys, ~3,500 new
// ones a second over the default 10 minutes, but its buckets fill
// unevenly (as Poisson draws): at a quarter of that rate (2 keys a bucket
// on average) one bucket in a thousand is full, at half of it one in 20.
// So a few early evictions are the table's way at any busy rate, and
// not worth a word: once a lock stripe's evictions reach recentWarnShare
// of the keys it recorded (and recentWarnMin), too many pairs come for
// the window, and onEvicted is called, once a run (capture warns).
const (
	recentBuckets = 1 << 18
	recentWays    = 8 // 64 bytes: one cache line a bucket
	recentLocks   = 256
	recentTick    = 100 * time.Millisecond // the resolution of entries' times

	recentWarnShare = 100 // onEvicted once evictions reach 1/recentWarnShare of the keys recorded
	recentWarnMin   = 4   // and at least this many (in one lock stripe)
)

// recentSet is the run's recent set, shared by its nodes. A nil one
// (RepeatWindow 0) finds no repeat.
type recentSet struct {
	window  int64 // in ticks
	start   time.Time
	seed    maphash.Seed
	perPort func(netip.Addr) bool // whether a sender at this address is its address and port
	mask    uint64                // buckets - 1 (recentBuckets but in tests)
	// locks guard the buckets, each a stripe of them, and count the keys
	// recorded there and the live entries evicted (no shared counter on
	// a flood's path).
	locks stripes
	// warned is set when a stripe's evictions first reach the warning's
	// share (recentWarnShare), which calls onEvicted (if set) once.
	warned    atomic.Bool
	onEvicted func()
	// slots holds each bucket's entries in turn: fingerprint<<32 | the
	// tick it was recorded in + 1 (0: an empty entry).
	slots []uint64
	// mapped: slots is a mapping of its own (mapSlots), which close
	// unmaps; never a heap slice's pages, which munmap would take from
	// under the Go heap.
	mapped bool
}

// newRecentSet is the recent set of a run pointed where rule says, which
// starts at start, or nil for a window of 0.
func newRecentSet(window time.Duration, rule reach.Rule, start time.Time) *recentSet {
	return newRecentSetOf(window, rule, start, recentBuckets)
}

// newRecentSetOf is newRecentSet with a table of buckets buckets (a
// power of two; tests use small ones).
func newRecentSetOf(window time.Duration, rule reach.Rule, start time.Time, buckets int) *recentSet {
	if window <= 0 {
		return nil
	}
	perPort := func(a netip.Addr) bool {
		switch reach.ClassOf(a) {
		case reach.Loopback:
			return true
		case reach.Private:
			return rule.Private
		}
		return false
	}
	slots, mapped := mapSlots(buckets * recentWays)
	return &recentSet{
		window:  int64((window + recentTick - 1) / recentTick),
		start:   start,
		seed:    maphash.MakeSeed(),
		perPort: perPort,
		mask:    uint64(buckets - 1),
		slots:   slots,
		mapped:  mapped,
	}
}

// mapSlots returns n zeroed entries mapped apart from the Go heap
// (mapped), or on the heap if the mapping fails.
func mapSlots(n int) (slots []uint64, mapped bool) {
	b, err := unix.Mmap(-1, 0, n*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]uint64, n), false
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n), true
}

// close unmaps the table; s must not be used after. A nil set, or one
// whose table is on the heap, has nothing to unmap.
func (s *recentSet) close() {
	if s != nil && s.mapped && unmapSlots(s.slots) {
		s.slots, s.mapped = nil, false
	}
}

// unmapSlots unmaps a table mapSlots mapped, and reports whether it did.
func unmapSlots(slots []uint64) bool {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(slots))), len(slots)*8)
	return unix.Munmap(b) == nil
}

// repeat reports whether from sent a query of kind (the method's index)
// for hash ih within the window before now; if not, it notes this one.
func (s *recentSet) repeat(from netip.AddrPort, ih []byte, kind int, now time.Time) bool {
	if s == nil {
		return false
	}
	var k [16 + 2 + 20 + 1]byte
	a := from.Addr().Unmap()
	*(*[16]byte)(k[:16]) = a.As16()
	if s.perPort(a) {
		k[16], k[17] = byte(from.Port()>>8), byte(from.Port())
	}
	copy(k[18:38], ih)
	k[38] = byte(kind)
	h := maphash.Bytes(s.seed, k[:])
	fp, b := h>>32, int(h&s.mask)
	t := int64(max(now.Sub(s.start), 0) / recentTick)
	t = min(t, 1<<32-2) // 13 years on: every entry recorded then

	l := &s.locks[b%recentLocks]
	l.Lock()
	ways := s.slots[b*recentWays : (b+1)*recentWays]
	victim, victimAt := 0, int64(1<<32)
	for i, e := range ways {
		at := int64(uint32(e)) - 1 // -1: empty
		live := at >= 0 && t-at < s.window
		if live && e>>32 == fp {
			l.Unlock()
			return true
		}
		if !live {
			at = -1 // an expired entry goes before any live one
		}
		if at < victimAt {
			victim, victimAt = i, at
		}
	}
	ways[victim] = fp<<32 | uint64(t+1)
	l.recorded++
	if victimAt < 0 { // an empty or expired entry: the usual case
		l.Unlock()
		return false
	}
	l.evicted++ // a live one: its window cut short
	many := l.evicted >= recentWarnMin && l.evicted*recentWarnShare >= l.recorded
	l.Unlock()
	if many && !s.warned.Load() && s.warned.CompareAndSwap(false, true) && s.onEvicted != nil {
		s.onEvicted()
	}
	return false
}

// warnRecentFull says, once a run, that its recent set of entries
// entries evicts many live ones: what it means and what to do.
func warnRecentFull(log *slog.Logger, window time.Duration, entries int) {
	log.Warn("capture: more distinct (sender, hash) pairs came within --repeat-window than its set holds: "+
		"some were evicted before their window ended, and their repeats are recorded again, as sightings "+
		"(repeat_window_evicted counts them); give a shorter --repeat-window, which holds more pairs a second",
		"repeat_window", window.String(), "set_entries", entries,
		"pairs_a_second", math.Round(float64(entries)/window.Seconds()))
}

// evicted is the number of live entries evicted so far: keys whose
// repeats are recorded again before their window ends.
func (s *recentSet) evicted() int64 {
	if s == nil {
		return 0
	}
	return s.locks.evicted()
}

// stripe is one of a table's locks, each guarding a stripe of its
// buckets, and the counts kept under it (recorded: the recent set's keys
// recorded; evicted: live entries evicted).
type stripe struct {
	sync.Mutex
	recorded, evicted int64
}

// stripes are a table's locks (recentSet, hashCap).
type stripes [recentLocks]stripe

// evicted sums the stripes' evicted counts.
func (st *stripes) evicted() int64 {
	var n int64
	for i := range st {
		l := &st[i]
		l.Lock()
		n += l.evicted
		l.Unlock()
	}
	return n
}
