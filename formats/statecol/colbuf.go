// colBuf: one column chunk laid out from state rows (values, levels,
// dictionary) before the writer compresses and frames it.

package statecol

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"github.com/infohash/infohash/formats/schema"
)

// colBuf is one column chunk's content as it is laid out.
type colBuf struct {
	vals     []byte  // PLAIN values
	def, rep []uint8 // levels (optional and list columns)
	idx      []int32 // dictionary indexes
	entries  int     // level entries (rows, or list elements + empty lists)
	nulls    int64
	lo, hi   int64 // integer statistics
	hasStats bool
	min, max []byte // info_hash statistics

	dictCol bool // a dictionary-encoded string column
	plain   bool // it had too many distinct values: PLAIN from then on
	dict    []string
	ids     map[string]int32
	last    string
	lastID  int32
}

func (c *colBuf) reset(rows int) {
	c.vals, c.def, c.rep, c.idx = c.vals[:0], c.def[:0], c.rep[:0], c.idx[:0]
	c.entries, c.nulls, c.hasStats = rows, 0, false
	c.lo, c.hi = math.MaxInt64, math.MinInt64
	c.min, c.max = nil, nil
	c.plain, c.dict, c.ids, c.lastID = false, c.dict[:0], nil, -1
}

// int64v appends a required INT64.
func (c *colBuf) int64v(v int64) {
	c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(v))
	c.lo, c.hi = min(c.lo, v), max(c.hi, v)
}

// optInt64 appends an optional INT64 (0 is null).
func (c *colBuf) optInt64(v int64) {
	if v == 0 {
		c.def = append(c.def, 0)
		c.nulls++
		return
	}
	c.def = append(c.def, 1)
	c.int64v(v)
}

// int32v appends a required INT32.
func (c *colBuf) int32v(v int32) {
	c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(v))
	c.lo, c.hi = min(c.lo, int64(v)), max(c.hi, int64(v))
}

// The run appenders below lay out a run of old values as the per-value
// appenders would, copied in bulk: PLAIN values are the host's words
// (callers check littleEndian).

// int64s appends a run of 8-byte values (INT64 or DOUBLE bits), with
// their bounds if stats.
func (c *colBuf) int64s(run []int64, stats bool) {
	c.vals = append(c.vals, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(run))), 8*len(run))...)
	if stats {
		lo, hi := c.lo, c.hi
		for _, w := range run {
			lo, hi = min(lo, w), max(hi, w)
		}
		c.lo, c.hi = lo, hi
	}
}

// int32s appends a run of required INT32s as int32v does.
func (c *colBuf) int32s(run []int32) {
	c.vals = append(c.vals, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(run))), 4*len(run))...)
	lo, hi := c.lo, c.hi
	for _, v := range run {
		lo, hi = min(lo, int64(v)), max(hi, int64(v))
	}
	c.lo, c.hi = lo, hi
}

// optInt64s appends a run of optional INT64s given as definition levels
// and the non-null values, as optInt64 does for each, if it can: it
// reports false, appending nothing, for a run holding a level above 1 or
// a non-null 0 (which optInt64 lays out otherwise).
func (c *colBuf) optInt64s(defs []byte, vals []int64) bool {
	var or byte
	for _, d := range defs {
		or |= d
	}
	lo, hi, zero := c.lo, c.hi, false
	for _, w := range vals {
		lo, hi, zero = min(lo, w), max(hi, w), zero || w == 0
	}
	if or > 1 || zero {
		return false
	}
	c.def = append(c.def, defs...)
	c.nulls += int64(len(defs) - len(vals))
	c.vals = append(c.vals, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), 8*len(vals))...)
	c.lo, c.hi = lo, hi
	return true
}

// str appends a string of a dictionary column.
func (c *colBuf) str(v string) {
	if c.lastID >= 0 && v == c.last {
		c.idx = append(c.idx, c.lastID)
		return
	}
	c.strSlow(v)
}

// optStr appends an optional string ("" is null).
func (c *colBuf) optStr(v string) {
	if v == "" {
		c.def = append(c.def, 0)
		c.nulls++
		return
	}
	c.def = append(c.def, 1)
	c.str(v)
}

// maxDictValues is the most distinct strings a chunk is
// dictionary-encoded with; past it the values are written PLAIN.
const maxDictValues = 4096

func (c *colBuf) strSlow(v string) {
	if c.plain {
		c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(v)))
		c.vals = append(c.vals, v...)
		return
	}
	id := int32(-1)
	if c.ids != nil {
		if k, ok := c.ids[v]; ok {
			id = k
		}
	} else {
		for k, d := range c.dict {
			if d == v {
				id = int32(k)
				break
			}
		}
	}
	if id < 0 {
		if len(c.dict) == maxDictValues {
			// Too many distinct values: lay out what was indexed as
			// PLAIN values and go on that way.
			for _, k := range c.idx {
				c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(c.dict[k])))
				c.vals = append(c.vals, c.dict[k]...)
			}
			// No last value either: str would append the next one
			// equal to it as an index, which a PLAIN chunk drops.
			c.plain, c.idx, c.last, c.lastID = true, c.idx[:0], "", -1
			c.strSlow(v)
			return
		}
		id = int32(len(c.dict))
		c.dict = append(c.dict, v)
		switch {
		case c.ids != nil:
			c.ids[v] = id
		case len(c.dict) > 16:
			c.ids = make(map[string]int32, 64)
			for k, d := range c.dict {
				c.ids[d] = int32(k)
			}
		}
	}
	c.last, c.lastID = v, id
	c.idx = append(c.idx, id)
}

// strList appends a list<string> (required group (LIST) > repeated group
// list > required element): one entry per element, or one null entry for
// an empty list, counted as a null in the chunk's statistics as
// parquet-go counts it (a chunk of empty lists is AllNull).
func (c *colBuf) strList(l []string) {
	if len(l) == 0 {
		c.rep, c.def = append(c.rep, 0), append(c.def, 0)
		c.entries++
		c.nulls++
		return
	}
	for k, p := range l {
		c.rep, c.def = append(c.rep, uint8(min(k, 1))), append(c.def, 1)
		c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(len(p)))
		c.vals = append(c.vals, p...)
		c.entries++
	}
}

// fill lays out the columns of rows in mask in one pass over them: each
// row's cache lines are read once, where a pass per column read them 20
// times.
func (sw *stateWriter) fill(rows []schema.State, mask Columns) {
	sw.fillBegin(len(rows), mask)
	sw.fillRows(rows, mask)
	sw.fillEnd(mask)
}

// fillBegin readies the column buffers for a row group of n rows.
func (sw *stateWriter) fillBegin(n int, mask Columns) {
	c := &sw.cols
	for k := range c {
		c[k].reset(n)
		c[k].dictCol = k == cLastSource || k == cMetadataStatus || k == cTier || k == cLastFailure || k == cLeaseID ||
			k == cFirstSource || k == cInfoHashV2Source
	}
	on := func(k int) bool { return mask&(1<<k) != 0 }
	if on(cInfoHash) {
		c[cInfoHash].vals = slices.Grow(c[cInfoHash].vals, 20*n)
	}
	for _, k := range []int{cFirstSeen, cLastSeen, cSeenCount, cActivity} {
		if on(k) {
			c[k].vals = slices.Grow(c[k].vals, 8*n)
		}
	}
	c[cAvoidPeers].entries, c[cPeers].entries = 0, 0
	sw.hashSet = false
}

// fillRows appends rows to the column buffers (the columns in mask).
func (sw *stateWriter) fillRows(rows []schema.State, mask Columns) {
	c := &sw.cols
	on := func(k int) bool { return mask&(1<<k) != 0 }
	hash, v2, typ, first, last, count := on(cInfoHash), on(cInfoHashV2), on(cHashType), on(cFirstSeen), on(cLastSeen), on(cSeenCount)
	src, act, status, attempts, lastAt, fail := on(cLastSource), on(cActivity), on(cMetadataStatus), on(cAttempts), on(cLastAttempt), on(cLastFailure)
	next, lease, leaseUntil, tier, step, bad := on(cNextRetry), on(cLeaseID), on(cLeaseUntil), on(cTier), on(cBackoffStep), on(cBadMetadata)
	react, avoid, peers, firstSrc, failAt := on(cReactivated), on(cAvoidPeers), on(cPeers), on(cFirstSource), on(cLastFailureAt)
	peersAt, v2Src := on(cPeersAt), on(cInfoHashV2Source)
	hashes := len(c[cInfoHash].vals) // where rows' info_hash values start
	for i := range rows {
		s := &rows[i]
		if hash {
			c[cInfoHash].vals = append(c[cInfoHash].vals, s.InfoHash[:]...)
		}
		if v2 {
			if v := s.InfoHashV2; len(v) > 0 {
				c[cInfoHashV2].def = append(c[cInfoHashV2].def, 1)
				c[cInfoHashV2].vals = binary.LittleEndian.AppendUint32(c[cInfoHashV2].vals, uint32(len(v)))
				c[cInfoHashV2].vals = append(c[cInfoHashV2].vals, v...)
			} else {
				c[cInfoHashV2].def = append(c[cInfoHashV2].def, 0)
				c[cInfoHashV2].nulls++
			}
		}
		if typ {
			c[cHashType].int32v(int32(s.HashType))
		}
		if first {
			c[cFirstSeen].int64v(s.FirstSeen)
		}
		if last {
			c[cLastSeen].int64v(s.LastSeen)
		}
		if count {
			c[cSeenCount].int64v(s.SeenCount)
		}
		if src {
			c[cLastSource].str(s.LastSource)
		}
		if act {
			c[cActivity].vals = binary.LittleEndian.AppendUint64(c[cActivity].vals, math.Float64bits(s.Activity))
		}
		if status {
			c[cMetadataStatus].str(s.MetadataStatus)
		}
		if attempts {
			c[cAttempts].int32v(s.Attempts)
		}
		if lastAt {
			c[cLastAttempt].optInt64(s.LastAttempt)
		}
		if fail {
			c[cLastFailure].optStr(s.LastFailure)
		}
		if next {
			c[cNextRetry].optInt64(s.NextRetry)
		}
		if lease {
			c[cLeaseID].optStr(s.LeaseID)
		}
		if leaseUntil {
			c[cLeaseUntil].optInt64(s.LeaseUntil)
		}
		if tier {
			c[cTier].str(s.Tier)
		}
		if step {
			c[cBackoffStep].int32v(s.BackoffStep)
		}
		if bad {
			c[cBadMetadata].int32v(s.BadMetadata)
		}
		if react {
			c[cReactivated].optInt64(s.Reactivated)
		}
		if avoid {
			c[cAvoidPeers].strList(s.AvoidPeers)
		}
		if peers {
			c[cPeers].strList(s.Peers)
		}
		if firstSrc {
			c[cFirstSource].optStr(s.FirstSource)
		}
		if failAt {
			c[cLastFailureAt].optInt64(s.LastFailureAt)
		}
		if peersAt {
			c[cPeersAt].optInt64(s.PeersAt)
		}
		if v2Src {
			c[cInfoHashV2Source].optStr(s.InfoHashV2Source)
		}
	}
	if len(rows) > 0 && hash {
		lo, hi := hashBounds(c[cInfoHash].vals[hashes:])
		if !sw.hashSet || bytes.Compare(lo, sw.hashMin[:]) < 0 {
			sw.hashMin = schema.Hash(lo)
		}
		if !sw.hashSet || bytes.Compare(hi, sw.hashMax[:]) > 0 {
			sw.hashMax = schema.Hash(hi)
		}
		sw.hashSet = true
	}
}

// hashBounds returns the least and the greatest of the 20-byte hashes
// laid out one after another in b (at least one). Hashes are compared
// by their first 8 bytes as a big-endian word, the rest only on a tie:
// the same order as bytes.Compare, without its call a hash (a second
// pass over the rows with two calls a row was 5% of a merge).
func hashBounds(b []byte) (lo, hi []byte) {
	const size = len(schema.Hash{})
	lo, hi = b[:size], b[:size]
	loKey, hiKey := binary.BigEndian.Uint64(lo), binary.BigEndian.Uint64(hi)
	for o := size; o+size <= len(b); o += size {
		h := b[o : o+size]
		switch k := binary.BigEndian.Uint64(h); {
		case k < loKey || (k == loKey && bytes.Compare(h[8:], lo[8:]) < 0):
			lo, loKey = h, k
		case k > hiKey || (k == hiKey && bytes.Compare(h[8:], hi[8:]) > 0):
			hi, hiKey = h, k
		}
	}
	return lo, hi
}

// fillEnd completes the row group's statistics.
func (sw *stateWriter) fillEnd(mask Columns) {
	c := &sw.cols
	for k := range c {
		c[k].hasStats = c[k].lo <= c[k].hi
	}
	c[cActivity].hasStats = false
	if sw.hashSet && mask&(1<<cInfoHash) != 0 {
		c[cInfoHash].min, c[cInfoHash].max = bytes.Clone(sw.hashMin[:]), bytes.Clone(sw.hashMax[:])
	}
}
