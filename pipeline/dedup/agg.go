package dedup

import (
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/progress"
)

// agg is the in-batch aggregate of one hash's observations: the recent
// set, the first dedup layer.
// It is 56 bytes: with 20M distinct hashes in one run, every byte here is
// 20 MB of peak memory (the newest announce's time, which the
// reactivation rule weighs apart from other sightings, took the last 8).
// The first sighting is kept as its distance to the
// last (a batch spanning more than 49 days keeps it in batch.wide). The
// first sighting's source takes the byte the alignment of src left free:
// an id that does not fit is kept in batch.firstSrcs (a batch with more
// than 254 distinct sources).
type agg struct {
	h      schema.Hash
	flags  uint8  // aggV2, aggHasV2, aggWide, aggPeers
	fsrc   uint8  // interned source of the first observation, or wideSrc
	src    uint16 // interned source of the latest observation
	count  uint32 // observations in this run (saturates at 2^32-1)
	firstD uint32 // last - first, ms (unless aggWide)
	last   int64
	act    float64 // activity evaluated at last
}

const (
	aggV2    = 1 << iota // a v2 hash (hash_type 2)
	aggHasV2             // its full v2 hash is in batch.v2s
	aggWide              // its first sighting is in batch.wide
	aggPeers             // it has announced peers in its table's peers (peers.go)
)

// typ is the aggregate's hash_type.
func (a *agg) typ() int8 {
	if a.flags&aggV2 != 0 {
		return schema.HashV2
	}
	return schema.HashV1
}

// batch aggregates observations per partition.
type batch struct {
	halfLife float64     // ms
	decays   *decayTable // 2^(-dt/halfLife) for the usual dt (nil: exp2's)
	// noPeers leaves announced endpoints unread (Options.AnnouncedPeers).
	noPeers bool
	parts   [256]table
	obs     int64
	srcs    []string
	// srcView is srcs as the folding goroutines see it: a copy of the
	// slice taken before a row group's sources are interned alongside
	// (sources are only appended, so the ids it holds stay valid).
	srcView []string
	// annView is the announce's id as the folding goroutines see it,
	// set with srcView (aggann.go).
	annView uint16
	annSeen int // how many of the sources announceOf has searched
	// trackAnn keeps each hash's newest announce (table.anns): only when
	// the state the batch is applied to has rows, since the rule that
	// reads it (schedule.Reactivate) only ever sees known hashes.
	trackAnn bool
	srcID    map[string]uint16
	// tooManySources is set once a source is not interned: the batch
	// has maxSources distinct ones. readInput fails the input then.
	tooManySources bool
	v2s            map[schema.Hash][]byte // full v2 hashes (rare)
	v2srcs         map[schema.Hash]uint16 // the source of the observation that gave each of v2s
	wide           map[schema.Hash]int64  // first sightings too far from the last for agg.firstD (rare)
	firstSrcs      map[schema.Hash]uint16 // first sources whose id is too large for agg.fsrc (rare)
	v2mu           sync.Mutex             // guards v2s, v2srcs, wide and firstSrcs
	fut            future                 // bounds observation times (future.go)
	futNotes       []futureNote           // inputs with times past it, for the warning
	ports          badPorts               // announce_peer rows whose peer_port is no port (badports.go)
	cuts           []cutNote              // named Arrow files cut mid-message, read up to the cut
	workers        int
	prog           *progress.Reporter
	arena          *arena // the aggregates' memory
	// announce is the source id of announce_peer (noSource until an
	// input names it); peers6 the IPv6 addresses announce_peer rows
	// named, interned by peer6ID (peers.go).
	announce uint16
	peers6   []netip.Addr
	peer6ID  map[netip.Addr]uint32
}

func newBatch(halfLifeMs int64) *batch {
	b := &batch{halfLife: float64(halfLifeMs), decays: newDecayTable(halfLifeMs), srcID: map[string]uint16{},
		workers: max(1, runtime.GOMAXPROCS(0)), fut: noFuture}
	b.arena = &arena{}
	for i := range b.parts {
		b.parts[i].arena = b.arena
	}
	b.announce, b.annView = noSource, noSource // until interned
	return b
}

// release frees the aggregates' memory; the batch is unusable after it.
func (b *batch) release() {
	if b == nil {
		return
	}
	for i := range b.parts {
		b.parts[i] = table{}
	}
	b.arena.release()
}

// maxSources is the most distinct source values a batch holds (ids are
// 16 bits, to keep an aggregate small). Sources name a handful of
// discovery methods; an input with more is not observations.
const maxSources = math.MaxUint16

// noSource is no interned source's id (ids are below maxSources).
const noSource = math.MaxUint16

// wideSrc in agg.fsrc says the first source's id is in batch.firstSrcs.
const wideSrc = math.MaxUint8

// maxSourceLen bounds one source value: sources name discovery methods
// ("dht_sample_infohashes" is 21 bytes), and a batch holds up to
// maxSources of them (16 MB at this bound).
const maxSourceLen = 256

// sourceError says why s cannot be an observation's source, or is nil.
// The state's last_source is a STRING column, which must hold UTF-8:
// DuckDB refuses to read a file with other bytes in one, and with it the
// whole state glob.
func sourceError(s string) error {
	if len(s) > maxSourceLen {
		return fmt.Errorf("source has %d bytes, more than %d", len(s), maxSourceLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("source %s is not valid UTF-8", schema.Quote(s))
	}
	return nil
}

// intern returns the id of source s. A source is checked (sourceError)
// once, when it is first seen: one that fails is bad input, never
// interned, and its error is returned for the caller to name the row.
func (b *batch) intern(s string) (uint16, error) {
	if id, ok := b.srcID[s]; ok {
		return id, nil
	}
	if err := sourceError(s); err != nil {
		return 0, err
	}
	if len(b.srcs) >= maxSources {
		b.tooManySources = true // the input fails when its reader returns
		return 0, nil
	}
	id := uint16(len(b.srcs))
	s = strings.Clone(s) // s may alias an input's buffer, reused after
	b.srcs = append(b.srcs, s)
	b.srcID[s] = id
	if s == schema.SourceAnnouncePeer {
		b.announce = id
	}
	return id, nil
}

// decay is the weight of an observation dt ms older than the reference.
func (b *batch) decay(dt int64) float64 {
	if dt <= 0 {
		return 1
	}
	if dt < decayTableSpan && b.decays != nil {
		if v := b.decays.at(dt); v >= 0x1p-1022 { // a subnormal product lost bits: exp2's
			return v
		}
	}
	return exp2(-float64(dt) / b.halfLife)
}

// add folds one observation in; an invalid source (sourceError) is not
// folded but returned.
func (b *batch) add(h schema.Hash, v2 []byte, typ int8, at int64, src string) error {
	id, err := b.intern(src)
	if err != nil {
		return err
	}
	b.addID(&h, v2, typ, at, id)
	return nil
}

// addRows folds a slice of decoded rows in (scattered by partition): the
// partitions are split between workers in contiguous ranges (they share
// no table).
//
// The caller sets the view (batch.view) to cover every source id in r.
func (b *batch) addRows(r *recBuf) {
	var wg sync.WaitGroup
	for w := 0; w < b.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			lo, hi := w*256/b.workers, (w+1)*256/b.workers
			b.foldRecs(r, int(r.bounds[lo]), int(r.bounds[hi]))
		}(w)
	}
	wg.Wait()
	b.obs += int64(len(r.recs))
	b.prog.Add(int64(len(r.recs)))
}

// prefetchGroup is how many records foldRecs prefetches at a time.
const prefetchGroup = 16

// foldRecs folds recs (a run of whole partitions, which no other worker
// folds) into their tables. Each observation costs a slot and an
// aggregate that are usually not in cache at large batches, so the fold
// is software-pipelined: while a group of records is folded, the
// aggregates of the next group (whose slots are in cache by then) and the
// slots of the one after are prefetched, so that memory serves many
// misses at once instead of one after another. (Plain loads as a prefetch
// only overlapped the misses within one group: a missing load holds up
// the processor's reorder buffer, a prefetch instruction does not.) The
// pipeline runs on from one partition to the next instead of restarting
// for each, whose first groups would wait on memory.
//
// The records are r.recs[lo:hi]; an announced peer is folded right after
// its observation, while the hash's slot is in cache (peers.go).
func (b *batch) foldRecs(r *recBuf, lo, hi int) {
	recs := r.recs[lo:hi]
	var peers []endpoint
	if len(r.peer) > 0 {
		peers = r.peer[lo:hi]
	}
	const g = prefetchGroup
	var addrs [2 * g]uintptr
	b.prefetchSlots(recs, 0, &addrs)
	b.prefetchSlots(recs, g, &addrs)
	b.prefetchAggs(recs, 0, &addrs)
	for i := 0; i < len(recs); i += g {
		b.prefetchSlots(recs, i+2*g, &addrs)
		b.prefetchAggs(recs, i+g, &addrs)
		for k := i; k < min(i+g, len(recs)); k++ {
			o := &recs[k]
			var v2 []byte
			if o.v2 {
				v2 = r.v2[o.h]
			}
			a, i := b.fold1(&o.h, v2, o.typ, o.at, o.src)
			if peers != nil && peers[k] != 0 {
				b.parts[o.h[0]].addPeer(a, i, peers[k], o.at)
			}
		}
	}
}

// prefetchSlots prefetches the slots of recs[i:i+prefetchGroup].
func (b *batch) prefetchSlots(recs []obsRec, i int, addrs *[2 * prefetchGroup]uintptr) {
	n := 0
	for k := i; k < min(i+prefetchGroup, len(recs)); k++ {
		h := &recs[k].h
		if t := &b.parts[h[0]]; t.nslots > 0 {
			addrs[n] = t.slotAddr(slotKey(h) & uint64(t.nslots-1))
			n++
		}
	}
	if n > 0 {
		prefetch(&addrs[0], n)
	}
}

// prefetchAggs prefetches the aggregates the slots of recs[i:i+prefetchGroup]
// point to (both cache lines an aggregate may straddle).
func (b *batch) prefetchAggs(recs []obsRec, i int, addrs *[2 * prefetchGroup]uintptr) {
	n := 0
	for k := i; k < min(i+prefetchGroup, len(recs)); k++ {
		h := &recs[k].h
		t := &b.parts[h[0]]
		if t.nslots == 0 {
			continue
		}
		if s := t.slot(slotKey(h) & uint64(t.nslots-1)); s > 0 && s <= t.n {
			p := uintptr(unsafe.Pointer(t.at(s - 1)))
			addrs[n], addrs[n+1] = p, p+unsafe.Sizeof(agg{})-1
			n += 2
		}
	}
	if n > 0 {
		prefetch(&addrs[0], n)
	}
}

// addID folds one observation in; src is an interned id.
func (b *batch) addID(h *schema.Hash, v2 []byte, typ int8, at int64, src uint16) {
	b.obs++
	if b.obs%65536 == 0 {
		b.prog.Add(65536)
	}
	b.view(b.srcs, b.announce)
	b.fold1(h, v2, typ, at, src)
}

// fold1 folds one observation into its partition's table and returns
// the hash's aggregate and its index there. Workers may call it
// concurrently for different partitions.
func (b *batch) fold1(h *schema.Hash, v2 []byte, typ int8, at int64, src uint16) (*agg, int) {
	a, idx, ok := b.parts[h[0]].find(h)
	if !ok {
		a.last, a.firstD, a.count, a.act, a.src, a.flags = at, 0, 1, 1, src, 0
		b.setFirstSrc(a, src)
	} else {
		if a.count < math.MaxUint32 {
			a.count++
		}
		first, last := b.first(a), a.last
		// The first sighting's source; at a tie, the greater, as for
		// the last: the state does not depend on the inputs' order.
		if at < first || at == first && b.srcView[src] > b.srcView[b.firstSrc(a)] {
			b.setFirstSrc(a, src)
		}
		switch {
		case at > a.last:
			a.act = a.act*b.decay(at-a.last) + 1
			a.src = src
		case at == a.last:
			a.act++
			if b.srcView[src] > b.srcView[a.src] {
				a.src = src
			}
		default:
			a.act += b.decay(a.last - at)
		}
		if at < first || at > last {
			first, last = min(first, at), max(last, at)
			if d := last - first; d <= math.MaxUint32 && a.flags&aggWide == 0 {
				a.last, a.firstD = last, uint32(d) // setSpan's usual case, inlined
			} else {
				b.setSpan(a, first, last)
			}
		}
	}
	if src == b.annView && b.trackAnn {
		b.parts[h[0]].noteAnnounce(h, at)
	}
	// A full v2 hash whose first 20 bytes are h says h is a truncated
	// v2 hash, whatever hash_type said (or with no hash_type column). One
	// that is not h's is not kept: h is the DHT key, and keeping either
	// would make the state depend on the order of the inputs. (The
	// readers refuse such a row as bad input: this only guards them.)
	if len(v2) == 32 && [20]byte(v2[:20]) != *h {
		v2 = nil
	}
	if typ == schema.HashV2 || v2 != nil {
		a.flags |= aggV2
	}
	if v2 != nil && a.flags&aggHasV2 == 0 {
		a.flags |= aggHasV2
		b.v2mu.Lock()
		if _, ok := b.v2s[*h]; !ok {
			if b.v2s == nil {
				b.v2s, b.v2srcs = map[schema.Hash][]byte{}, map[schema.Hash]uint16{}
			}
			b.v2s[*h], b.v2srcs[*h] = append([]byte(nil), v2...), src
		}
		b.v2mu.Unlock()
	}
	return a, idx
}

// distinct is the number of distinct hashes in the batch.
func (b *batch) distinct() int64 {
	var n int64
	for i := range b.parts {
		n += int64(b.parts[i].n)
	}
	return n
}

func (b *batch) v2Of(a *agg) []byte {
	if a.flags&aggHasV2 == 0 {
		return nil
	}
	return b.v2s[a.h]
}

// takeV2 sets st's info_hash_v2 to the full v2 hash of a's hash the batch
// read, if any, and info_hash_v2_source to the source of the observation
// that gave it (the claim's provenance).
func (b *batch) takeV2(st *schema.State, a *agg) {
	if v2 := b.v2Of(a); v2 != nil {
		st.InfoHashV2, st.InfoHashV2Source = v2, b.srcs[b.v2srcs[a.h]]
	}
}

// newState is the state row of a hash first seen in this batch.
func (b *batch) newState(e *entry, now int64) schema.State {
	var st schema.State
	b.setNewState(&st, e, now)
	return st
}

// setNewState sets *st to newState(e, now) in place: returned and then
// copied, each 250-byte row cost a second copy (with write barriers
// while the collector runs), 2% of a 10M-row first import.
func (b *batch) setNewState(st *schema.State, e *entry, now int64) {
	a := &e.agg
	*st = schema.State{} // then field by field: a literal is built aside and copied
	st.InfoHash, st.HashType = a.h, a.typ()
	st.FirstSeen, st.LastSeen, st.SeenCount = b.first(a), a.last, int64(a.count)
	st.LastSource, st.Activity, st.FirstSource = b.srcs[a.src], a.act, b.srcs[b.firstSrc(a)]
	st.MetadataStatus, st.NextRetry, st.Tier = schema.StatusNew, now, schema.TierHot
	st.Peers, st.PeersAt = b.peersOf(a)
	b.takeV2(st, a)
}

// fold merges a batch aggregate into a known hash's state (existence,
// activity and, unless fetched, hash type; scheduling is the caller's).
func (b *batch) fold(st *schema.State, a *agg) {
	// first_source stays the source of the sighting at first_seen: an
	// earlier one brings its own; at a tie, the greater (a known one), as
	// within a batch, so the state does not depend on how the inputs were
	// grouped into commits.
	switch first := b.first(a); {
	case first < st.FirstSeen:
		st.FirstSeen, st.FirstSource = first, b.srcs[b.firstSrc(a)]
	case first == st.FirstSeen:
		st.FirstSource = max(st.FirstSource, b.srcs[b.firstSrc(a)])
	}
	unseen := st.SeenCount == 0
	st.SeenCount += int64(a.count)
	b.foldPeers(st, a)
	src := b.srcs[a.src]
	switch {
	case unseen:
		// Never sighted before (seen_count 0): merge added the row
		// for a fetch result, its last_seen the attempt's time and its
		// source "import", placeholders no sighting made. These are its
		// first sightings, whenever they were: they are its last ones.
		st.Activity, st.LastSeen, st.LastSource = a.act, a.last, src
	case a.last > st.LastSeen:
		st.Activity = st.Activity*b.decay(a.last-st.LastSeen) + a.act
		st.LastSeen, st.LastSource = a.last, src
	case a.last == st.LastSeen:
		st.Activity += a.act
		st.LastSource = max(st.LastSource, src)
	default:
		st.Activity += a.act * b.decay(st.LastSeen-a.last)
	}
	// v2 wins over v1 as a claim, but a fetched hash's type is the one
	// its metadata proved (merge set it): a claim does not change it.
	if a.flags&aggV2 != 0 && (st.MetadataStatus != schema.StatusFetched || st.HashType == schema.HashV2) {
		st.HashType = schema.HashV2
		if st.InfoHashV2 == nil {
			b.takeV2(st, a)
		}
	}
}
