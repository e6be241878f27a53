// Reading the DELTA_BINARY_PACKED INT64 chunks of our writer's layout
// without the page reader, for a splice.

package statecol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// readDeltaInt64 decodes the chunk of column col in row group i, of n
// rows, into buf (grown as needed) when it is what infohash's writer
// makes of a required INT64 column: one uncompressed DELTA_BINARY_PACKED
// data page with a CRC, which it checks. It reports false for any other
// chunk and for one that fails a check or does not decode: the page
// reader then reads it (and reports any damage as it always did).
//
// parquet-go's decoder clears its output before filling it and keeps
// the values in a page buffer of its pool: the two timestamp columns of
// a splice (first_seen, last_seen: 78k rows a partition of a 20M-hash
// state) were 7% of an incremental dedup's CPU, 2.9% of it the clearing.
func (f *File) readDeltaInt64(i, col, n int) ([]int64, bool) {
	if f.bufs == nil {
		f.bufs = getDeltaBufs()
	}
	out, ok := f.readDelta(i, col, n, f.bufs.ints[col])
	f.bufs.ints[col] = out[:0]
	return out, ok
}

func (f *File) readDelta(i, col, n int, buf []int64) ([]int64, bool) {
	// unpackDeltas loads little-endian words as the host's: a big-endian
	// host reads through the page reader.
	m, ok := f.ownChunk(i, stateColumnNames[col], format.Int64, int64(n))
	if !ok || !littleEndian || m.TotalCompressedSize > 1<<30 {
		return buf, false
	}
	if f.bufs == nil {
		f.bufs = getDeltaBufs()
	}
	raw := growBytes(f.bufs.raw, int(m.TotalCompressedSize))
	f.bufs.raw = raw
	if _, err := f.r.ReadAt(raw, m.DataPageOffset); err != nil {
		return buf, false
	}
	r := bytes.NewReader(raw)
	var h format.PageHeader
	if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&h); err != nil {
		return buf, false
	}
	body := raw[len(raw)-r.Len():]
	if !ownPage(&h, format.DeltaBinaryPacked, int64(n), len(body)) || !crcHolds(&h, body) {
		return buf, false
	}
	out, err := decodeDeltaInt64(buf, body, n)
	if err != nil || len(out) != n {
		return out, false
	}
	return out, true
}

// deltaBufs are readDeltaInt64's buffers: a chunk as read, and the
// values of each column.
type deltaBufs struct {
	raw  []byte
	ints [numStateColumns][]int64
}

// deltaPool keeps deltaBufs between files (a channel, as writers: a
// sync.Pool drops them at every collection); a File takes one when it
// first needs it and gives it back when closed. Buffers of their own
// for each file, 2 MB a partition of a 20M-hash state, were faulted in
// afresh each time.
var deltaPool = make(chan *deltaBufs, 8)

func getDeltaBufs() *deltaBufs {
	select {
	case b := <-deltaPool:
		return b
	default:
		return &deltaBufs{}
	}
}

func putDeltaBufs(b *deltaBufs) {
	select {
	case deltaPool <- b:
	default:
	}
}

// growBytes returns b resized to n bytes (its contents not kept).
func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

var errDelta = errors.New("statecol: malformed DELTA_BINARY_PACKED values")

// maxMiniBlockValues bounds the values of a miniblock decodeDeltaInt64
// takes (our writer's have 32).
const maxMiniBlockValues = 512

// decodeDeltaInt64 decodes the DELTA_BINARY_PACKED INT64 values of src
// into dst's memory (grown as needed; every value written, nothing
// cleared first), as parquet-go's decoder does: a last miniblock shorter
// than its bit width says reads as zero-padded, miniblocks after the last
// value are not read, and sums wrap. It refuses what parquet-go's does
// (blocks of a multiple of 128 values, miniblocks of 32), and blocks not
// split evenly into miniblocks of at most maxMiniBlockValues; and more
// than limit values (a row group's rows), before allocating for them.
func decodeDeltaInt64(dst []int64, src []byte, limit int) ([]int64, error) {
	blockSize, k := binary.Uvarint(src)
	if k <= 0 {
		return dst, errDelta
	}
	src = src[k:]
	miniBlocks, k := binary.Uvarint(src)
	// The checks of parquet-go's decoder, and ours (whole miniblocks).
	if k <= 0 || blockSize == 0 || blockSize%128 != 0 || blockSize > 1<<16 ||
		miniBlocks == 0 || blockSize%miniBlocks != 0 {
		return dst, errDelta
	}
	src = src[k:]
	per := blockSize / miniBlocks // values per miniblock
	if per%32 != 0 || per > maxMiniBlockValues {
		return dst, errDelta
	}
	total, k := binary.Uvarint(src)
	if k <= 0 || total > uint64(limit) {
		return dst, errDelta
	}
	src = src[k:]
	first, k := binary.Varint(src)
	if k <= 0 {
		return dst, errDelta
	}
	src = src[k:]
	if total == 0 {
		return dst[:0], nil
	}
	n := int(total)
	if cap(dst) < n {
		dst = make([]int64, n)
	}
	out := dst[:n]
	out[0] = first
	last, at := first, 1
	var pad [maxMiniBlockValues*8 + 16]byte // a short last miniblock, zero-padded
	for at < n {
		if len(src) == 0 {
			return dst, errDelta // values missing
		}
		minDelta, k := binary.Varint(src)
		if k <= 0 || uint64(len(src)-k) < miniBlocks {
			return dst, errDelta
		}
		widths := src[k : k+int(miniBlocks)]
		src = src[k+int(miniBlocks):]
		for _, w := range widths {
			if at >= n {
				break
			}
			if w > 64 {
				return dst, errDelta
			}
			cnt := min(int(per), n-at)
			size := int(per) * int(w) / 8
			data := src
			if size+16 > len(src) {
				// Near the end: a copy with room for unpack's 8-byte loads.
				clear(pad[:size+16])
				copy(pad[:], src[:min(size, len(src))])
				data = pad[:]
			}
			src = src[min(size, len(src)):]
			last = unpackDeltas(out[at:at+cnt], data, uint(w), minDelta, last)
			at += cnt
		}
	}
	return out, nil
}

// unpackDeltas sets out[j] to the running sum from last of minDelta plus
// the j-th w-bit value packed in data (little-endian, least significant
// bit first; data has 16 bytes beyond the values' last) and returns the
// last sum. Each value is one unaligned 8-byte load, shifted and masked
// (a second byte for widths above 56).
func unpackDeltas(out []int64, data []byte, w uint, minDelta, last int64) int64 {
	if w == 0 {
		for j := range out {
			last += minDelta
			out[j] = last
		}
		return last
	}
	if len(out) == 0 || len(data) < (len(out)*int(w)+7)/8+16 {
		panic("statecol: unpackDeltas: short data") // decodeDeltaInt64 pads it
	}
	mask := uint64(1)<<w - 1 // all ones for w = 64
	p := unsafe.Pointer(unsafe.SliceData(data))
	bit := uint(0)
	if w <= 56 {
		for j := range out {
			x := *(*uint64)(unsafe.Add(p, bit>>3)) >> (bit & 7)
			last += minDelta + int64(x&mask)
			out[j] = last
			bit += w
		}
		return last
	}
	for j := range out {
		b, off := bit>>3, bit&7
		x := *(*uint64)(unsafe.Add(p, b)) >> off
		if off+w > 64 {
			x |= uint64(*(*byte)(unsafe.Add(p, b+8))) << (64 - off)
		}
		last += minDelta + int64(x&mask)
		out[j] = last
		bit += w
	}
	return last
}
