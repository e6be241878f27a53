package merge

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// A result is held from its input's reading to its partition's apply
// packed: its columns but the metadata ones (schema.ResultMeta, in the
// spill for an ok result, dropped for a failed one) appended to its
// partition's bytes, the integers as varints and the strings that repeat
// (lease_id: one a plan-retries run; outcome and a peer failure's class:
// a few names) as numbers in a table of strings (internTable). A failure
// of 1M read took 248 bytes as a struct, and its strings and its
// pointers (the *_ms columns) more, 330 MB in all: packed, 50-80 bytes.
// TestPackedKeepsEveryColumn checks that every column of schema.Result
// comes back as it was read.
//
// A packed result is, in order: the hash (20 bytes), a uvarint of flags
// (packV2 .. packMeta: which of the optional columns follow), hash_type,
// attempt, lease_id, attempted_at, outcome, detail, peers_found,
// peers_tried, then info_hash_v2 and peer_failures (each addr, class,
// at) if flagged, each *_ms column flagged (packMs), served_by,
// metadata_size, the metadata's place in the spill if flagged, and
// retry_after if flagged (packRetryAfter).
const (
	packV2         = 1 << iota   // info_hash_v2 not nil
	packFailures                 // peer_failures not nil (an empty list is not null)
	packMeta                     // a metaRef follows
	packMs                       // the first of the seven *_ms columns (msFields' order)
	packRetryAfter = packMs << 7 // retry_after not null (0)
)

// msFields are the pointers to result r's optional durations, in the
// order their flags and values are packed.
func msFields(r *schema.Result) [7]**int64 {
	return [7]**int64{&r.LookupMs, &r.ConnectMs, &r.MetadataMs, &r.TotalMs, &r.HandshakeMs, &r.ExtensionMs, &r.VerifyMs}
}

// maxInterned bounds an internTable: past it, strings are packed as
// they are (an input whose every row names a lease of its own would
// fill a map for nothing).
const maxInterned = 4096

// internTable numbers the strings that repeat among the results read.
// It grows while the inputs are read (one goroutine), and is only read
// by the workers that unpack the results afterwards.
type internTable struct {
	ids  map[string]uint64
	strs []string
}

// appendString packs s: uvarint 0, its length and its bytes, or k+1
// for the table's k-th string (intern: s may be added to the table).
func (t *internTable) appendString(b []byte, s string, intern bool) []byte {
	if intern {
		k, ok := t.ids[s]
		if !ok && len(t.strs) < maxInterned {
			if t.ids == nil {
				t.ids = map[string]uint64{}
			}
			k, ok = uint64(len(t.strs)), true
			t.ids[s] = k
			t.strs = append(t.strs, s)
		}
		if ok {
			return binary.AppendUvarint(b, k+1)
		}
	}
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// pack appends res to b (its metadata columns left out: the caller
// checked that it holds none).
func (t *internTable) pack(b []byte, res *result) []byte {
	r := &res.Result
	var flags uint64
	if r.InfoHashV2 != nil {
		flags |= packV2
	}
	if r.PeerFailures != nil {
		flags |= packFailures
	}
	if res.meta != (metaRef{}) {
		flags |= packMeta
	}
	ms := msFields(r)
	for i, p := range ms {
		if *p != nil {
			flags |= packMs << i
		}
	}
	if r.RetryAfter != 0 {
		flags |= packRetryAfter
	}
	b = append(b, r.InfoHash[:]...)
	b = binary.AppendUvarint(b, flags)
	b = append(b, byte(r.HashType))
	b = binary.AppendVarint(b, int64(r.Attempt))
	b = t.appendString(b, r.LeaseID, true)
	b = binary.AppendVarint(b, r.AttemptedAt)
	b = t.appendString(b, r.Outcome, true)
	b = t.appendString(b, r.Detail, false)
	b = binary.AppendVarint(b, int64(r.PeersFound))
	b = binary.AppendVarint(b, int64(r.PeersTried))
	if flags&packV2 != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.InfoHashV2)))
		b = append(b, r.InfoHashV2...)
	}
	if flags&packFailures != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.PeerFailures)))
		for _, pf := range r.PeerFailures {
			b = t.appendString(b, pf.Addr, false)
			b = t.appendString(b, pf.Class, true)
			b = binary.AppendVarint(b, pf.At)
		}
	}
	for _, p := range ms {
		if *p != nil {
			b = binary.AppendVarint(b, **p)
		}
	}
	b = t.appendString(b, r.ServedBy, false)
	b = binary.AppendVarint(b, r.MetadataSize)
	if flags&packMeta != 0 {
		b = binary.AppendVarint(b, res.meta.off)
		b = binary.AppendVarint(b, res.meta.n)
		b = binary.AppendVarint(b, res.meta.infoLen)
	}
	if flags&packRetryAfter != 0 {
		b = binary.AppendVarint(b, r.RetryAfter)
	}
	return b
}

// unpacker reads packed results back, with the table they were packed
// with. Its strings are the table's or new ones (none shares the packed
// bytes), and its durations are allocated a partition at a time. Bytes
// that are not what pack wrote (a damaged spill) set err, which sticks,
// rather than index past b or the table.
type unpacker struct {
	strs []string
	b    []byte
	ms   []int64 // durations not handed out yet
	err  error
}

// errPacked is the error of packed bytes that do not read back.
var errPacked = errors.New("packed results do not read back")

func (u *unpacker) fail(what string) {
	if u.err == nil {
		u.err = fmt.Errorf("%w: %s", errPacked, what)
	}
	u.b = nil
}

func (u *unpacker) uvarint() uint64 {
	v, n := binary.Uvarint(u.b)
	if n <= 0 {
		u.fail("a bad varint")
		return 0
	}
	u.b = u.b[n:]
	return v
}

func (u *unpacker) varint() int64 {
	v, n := binary.Varint(u.b)
	if n <= 0 {
		u.fail("a bad varint")
		return 0
	}
	u.b = u.b[n:]
	return v
}

// take returns the next n bytes (nil past the end).
func (u *unpacker) take(n uint64) []byte {
	if n > uint64(len(u.b)) {
		u.fail(fmt.Sprintf("%d bytes wanted, %d left", n, len(u.b)))
		return nil
	}
	b := u.b[:n]
	u.b = u.b[n:]
	return b
}

func (u *unpacker) string() string {
	if k := u.uvarint(); k > 0 {
		if k > uint64(len(u.strs)) {
			u.fail(fmt.Sprintf("string %d of a table of %d", k, len(u.strs)))
			return ""
		}
		return u.strs[k-1]
	}
	return string(u.take(u.uvarint()))
}

// duration returns a pointer to v, from a block of them.
func (u *unpacker) duration(v int64) *int64 {
	if len(u.ms) == 0 {
		u.ms = make([]int64, 256)
	}
	p := &u.ms[0]
	*p, u.ms = v, u.ms[1:]
	return p
}

// next unpacks the next result into res (every field set); on bytes
// that do not read back it sets u.err.
func (u *unpacker) next(res *result) {
	*res = result{}
	r := &res.Result
	copy(r.InfoHash[:], u.take(uint64(len(r.InfoHash))))
	flags := u.uvarint()
	if t := u.take(1); t != nil {
		r.HashType = int8(t[0])
	}
	r.Attempt = int32(u.varint())
	r.LeaseID = u.string()
	r.AttemptedAt = u.varint()
	r.Outcome = u.string()
	r.Detail = u.string()
	r.PeersFound = int32(u.varint())
	r.PeersTried = int32(u.varint())
	if flags&packV2 != 0 {
		r.InfoHashV2 = append([]byte{}, u.take(u.uvarint())...)
	}
	if flags&packFailures != 0 {
		n := u.uvarint()
		if n > uint64(len(u.b)) { // a failure takes 3 bytes at least
			u.fail(fmt.Sprintf("%d peer failures in %d bytes", n, len(u.b)))
			return
		}
		r.PeerFailures = make([]schema.PeerFailure, n)
		for i := range r.PeerFailures {
			pf := &r.PeerFailures[i]
			pf.Addr = u.string()
			pf.Class = u.string()
			pf.At = u.varint()
		}
	}
	for i, p := range msFields(r) {
		if flags&(packMs<<i) != 0 {
			*p = u.duration(u.varint())
		}
	}
	r.ServedBy = u.string()
	r.MetadataSize = u.varint()
	if flags&packMeta != 0 {
		res.meta.off = u.varint()
		res.meta.n = u.varint()
		res.meta.infoLen = u.varint()
	}
	if flags&packRetryAfter != 0 {
		r.RetryAfter = u.varint()
	}
}
