package capture

import (
	"hash/maphash"
	"time"
)

// The per-hash cap (the rule is recent.go's, with the repeat rule):
// hashCapBuckets buckets of recentWays entries of 8 bytes, mapped apart
// from the Go heap as the recent set is, 2 MiB whatever comes. An entry
// is a 20-bit fingerprint of the hash (hashed with a seed of the run's),
// the get_peers recorded in its window (12 bits) and the tick its window
// began in + 1 (32 bits; 0: an empty entry).
//
// 262,144 hashes: the cap needs to hold only a hash on its way to it,
// which comes every 19s or sooner (32 in 10 minutes), while a new hash
// evicts one seen once first, each bucket's oldest: at 3,500 new hashes a
// second (the recent set's rate) an entry seen once lasts about 75s. A
// hash evicted meanwhile comes too seldom to reach the cap: the table
// too small only lets it start later, never drops a sighting under it.
// A live entry evicted is counted (hash_cap_evicted): many of them mean
// hashes near their cap evicted, and counted from 1 again.
// Four times the table (8 MiB) cost a flood of distinct hashes about
// twice as much a get_peers (cache misses: ~300ns against ~160ns in
// BenchmarkHashCap, medians), for nothing of this.
const (
	hashCapBuckets = 1 << 15
	// MaxSightingsLimit bounds Options.MaxSightingsPerHash: the most an
	// entry's 12-bit count holds.
	MaxSightingsLimit = 1<<12 - 1

	capFPShift    = 44 // the fingerprint: the entry's top 20 bits
	capCountShift = 32 // the count: the 12 bits below it
	capCountMask  = 1<<12 - 1
)

// hashCap is the run's per-hash cap, shared by its nodes. A nil one (a
// cap or RepeatWindow of 0) caps nothing.
type hashCap struct {
	window int64  // in ticks (recentTick)
	max    uint64 // get_peers recorded a window, 1 to MaxSightingsLimit
	start  time.Time
	seed   maphash.Seed
	mask   uint64 // buckets - 1
	// locks guard the buckets, each a stripe of them, and count the live
	// entries evicted there (no shared counter on a flood's path).
	locks  stripes
	slots  []uint64
	mapped bool // slots is a mapping of its own (mapSlots), which close unmaps
}

// newHashCap is the cap of limit get_peers a hash per window, over a
// table of buckets buckets (a power of two; tests use small ones), for a
// run that starts at start; nil for a limit or window of 0.
func newHashCap(limit int, window time.Duration, start time.Time, buckets int) *hashCap {
	if limit <= 0 || window <= 0 {
		return nil
	}
	slots, mapped := mapSlots(buckets * recentWays)
	return &hashCap{
		window: int64((window + recentTick - 1) / recentTick),
		max:    uint64(min(limit, MaxSightingsLimit)),
		start:  start,
		seed:   maphash.MakeSeed(),
		mask:   uint64(buckets - 1),
		slots:  slots,
		mapped: mapped,
	}
}

// close unmaps the table; c must not be used after.
func (c *hashCap) close() {
	if c != nil && c.mapped && unmapSlots(c.slots) {
		c.slots, c.mapped = nil, false
	}
}

// full reports whether hash ih has had its max get_peers recorded within
// its window at now; if not, it counts this one, which the caller
// records. A hash's window begins with the first one counted after the
// last window ended.
func (c *hashCap) full(ih []byte, now time.Time) bool {
	if c == nil {
		return false
	}
	h := maphash.Bytes(c.seed, ih)
	fp, b := h>>capFPShift, int(h&c.mask)
	t := int64(max(now.Sub(c.start), 0) / recentTick)
	t = min(t, 1<<32-2) // as the recent set's

	l := &c.locks[b%recentLocks]
	l.Lock()
	defer l.Unlock()
	ways := c.slots[b*recentWays : (b+1)*recentWays]
	// The victim, if the hash has no entry: an empty or expired entry,
	// else the live one of fewest get_peers (the oldest of those): a
	// flood of distinct hashes evicts hashes seen once, and leaves those
	// near their cap.
	victim, victimScore := 0, int64(1<<62)
	for i, e := range ways {
		at := int64(uint32(e)) - 1 // -1: empty
		if at < 0 || t-at >= c.window {
			if victimScore >= 0 {
				victim, victimScore = i, -1
			}
			continue
		}
		n := e >> capCountShift & capCountMask
		if e>>capFPShift == fp {
			if n >= c.max {
				return true
			}
			ways[i] = e + 1<<capCountShift
			return false
		}
		if score := int64(n)<<33 | at; score < victimScore {
			victim, victimScore = i, score
		}
	}
	if victimScore >= 0 { // a live one: its hash counts from 1 again
		l.evicted++
	}
	ways[victim] = fp<<capFPShift | 1<<capCountShift | uint64(t+1)
	return false
}

// evicted is the number of live entries evicted so far (hash_cap_evicted):
// hashes whose get_peers are counted from 1 again before their window
// ends, so that one may have more than its cap recorded in it.
func (c *hashCap) evicted() int64 {
	if c == nil {
		return 0
	}
	return c.locks.evicted()
}
