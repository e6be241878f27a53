package rowio

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// Limits.MaxValueBytes bounds an Arrow stream's binary and string
// columns too (OpenArrowLimited), before their buffers are allocated:
// arrow-go allocates a buffer at the length the batch declares, or, for
// a compressed one (LZ4 or ZSTD), at the uncompressed length its first 8
// bytes declare, then decompresses into it; reading a row copies its
// value once more. A 1 GiB info dictionary of zeros that zstd shrank to
// 32 KB made merge allocate 2 GiB before its row was checked. A record
// batch whose data buffer of such a column declares more bytes than its
// values (the column's values less its nulls, and of a row's column at
// most the batch's rows) could take at the bound each
// is refused (a *ValueLimitError with Batch set) while its body passes
// through framedReader: from the batch's metadata when it is not
// compressed, else from the buffer's first 8 bytes, before the arrow
// reader has the whole body.

// valueSlack is what a writer may put in a data buffer besides its values:
// padding to Arrow's 64-byte alignment.
const valueSlack = 64

// watchedColumn is a binary or string leaf of a stream's schema with a
// bound: where its field node and buffers are in each record batch.
type watchedColumn struct {
	path []string
	node int   // its field node, in the batch's order
	data int   // its data buffer (after the validity bitmap and offsets)
	vcap int64 // bytes a value
}

// arrowWatch returns the columns of s that lim bounds, by their Parquet
// paths (a list's values under "list", "element", as MaxValueBytes names
// them). It lays the batch out as arrow-go's reader reads it (a node per
// array, depth first; a validity bitmap for each but null arrays, then the
// type's buffers) and stops at a type whose buffers the schema alone does
// not tell (views, unions, run-end encoding): columns after it go
// unwatched, bounded by MaxArrowBuffer only.
func arrowWatch(s *arrow.Schema, lim Limits) []watchedColumn {
	if lim.MaxValueBytes == nil {
		return nil
	}
	w := arrowWalker{lim: lim}
	for _, f := range s.Fields() {
		if !w.walk(f.Type, []string{f.Name}) {
			break
		}
	}
	return w.out
}

type arrowWalker struct {
	lim         Limits
	nodes, bufs int
	out         []watchedColumn
}

// walk counts the nodes and buffers of an array of type t at path; false
// at a type it cannot lay out.
func (w *arrowWalker) walk(t arrow.DataType, path []string) bool {
	child := func(p ...string) []string { return append(append([]string(nil), path...), p...) }
	switch t := t.(type) {
	case *arrow.NullType:
		w.nodes++
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		if c := w.lim.valueCap(path); c > 0 {
			w.out = append(w.out, watchedColumn{path: path, node: w.nodes, data: w.bufs + 2, vcap: c})
		}
		w.nodes++
		w.bufs += 3
	case *arrow.ListType:
		w.nodes++
		w.bufs += 2
		return w.walk(t.Elem(), child("list", "element"))
	case *arrow.LargeListType:
		w.nodes++
		w.bufs += 2
		return w.walk(t.Elem(), child("list", "element"))
	case *arrow.MapType:
		w.nodes++
		w.bufs += 2
		return w.walk(t.Elem(), child("key_value"))
	case *arrow.FixedSizeListType:
		w.nodes++
		w.bufs++
		return w.walk(t.Elem(), child("list", "element"))
	case *arrow.StructType:
		w.nodes++
		w.bufs++
		for _, f := range t.Fields() {
			if !w.walk(f.Type, child(f.Name)) {
				return false
			}
		}
	case arrow.ExtensionType:
		return w.walk(t.StorageType(), path)
	case *arrow.DictionaryType: // its indexes; the values come in dictionary batches
		w.nodes++
		w.bufs += 2
	case arrow.BinaryViewDataType, arrow.UnionType, *arrow.RunEndEncodedType,
		*arrow.ListViewType, *arrow.LargeListViewType:
		return false
	case arrow.FixedWidthDataType: // booleans, numbers, times, fixed-size binary
		w.nodes++
		w.bufs += 2
	default:
		return false
	}
	return true
}

// batchWatch is what framedReader checks of one record batch's body.
type batchWatch struct {
	rows    int64   // the batch's
	sizes   []int64 // of each watched column's data buffer (-1: not yet known)
	values  []int64 // each watched column's values (its rows less nulls)
	levels  []int64 // each watched column's rows (its node's length)
	prefix  []bodyPrefix
	pending int // prefixes not yet whole
}

// bodyPrefix is the 8-byte uncompressed length at offset at of the body,
// of watched column col's compressed data buffer.
type bodyPrefix struct {
	at, raw int64 // raw: the buffer's bytes less the prefix
	col     int
	b       [8]byte
	got     int
}

// watchBatch starts checking a record batch message with metadata meta
// (checked by checkMessage): nil when it is no record batch or watches
// nothing. An error is a buffer over its bound that the metadata alone
// tells (an uncompressed batch).
func (g *framedReader) watchBatch(meta []byte) (*batchWatch, error) {
	if len(g.watch) == 0 {
		return nil, nil
	}
	b := fbBytes(meta)
	msg, err := b.table(0)
	if err != nil {
		return nil, nil
	}
	typ, _ := msg.field(1)
	hp, _ := msg.field(2)
	if typ == 0 || typ >= int64(len(b)) || b[typ] != 3 || hp == 0 {
		return nil, nil // not a record batch
	}
	rb, err := b.table(hp)
	if err != nil {
		return nil, nil
	}
	bw := &batchWatch{}
	if p, _ := rb.field(0); p != 0 && p+8 <= int64(len(b)) {
		bw.rows = int64(binary.LittleEndian.Uint64(b[p:]))
	}
	nstart, nn, err1 := rb.vector(1, 16)
	bstart, nb, err2 := rb.vector(2, 16)
	comp, err3 := rb.field(3)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, nil // checkMessage refused it
	}
	for i, c := range g.watch {
		bw.sizes = append(bw.sizes, -1)
		if int64(c.node) >= nn || int64(c.data) >= nb {
			bw.values, bw.levels = append(bw.values, 0), append(bw.levels, 0)
			bw.sizes[i] = 0 // the arrow reader refuses the batch
			continue
		}
		n := int64(binary.LittleEndian.Uint64(b[nstart+16*int64(c.node):]))
		nulls := int64(binary.LittleEndian.Uint64(b[nstart+16*int64(c.node)+8:]))
		bw.levels = append(bw.levels, n)
		bw.values = append(bw.values, min(max(n-max(nulls, 0), 0), n))
		off := int64(binary.LittleEndian.Uint64(b[bstart+16*int64(c.data):]))
		size := int64(binary.LittleEndian.Uint64(b[bstart+16*int64(c.data)+8:]))
		switch {
		case comp == 0 || size == 0:
			bw.sizes[i] = size
		case size < 8:
			bw.sizes[i] = 0 // no length: the arrow reader refuses it
		default:
			bw.prefix = append(bw.prefix, bodyPrefix{at: off, raw: size - 8, col: i})
			bw.pending++
		}
	}
	if bw.pending == 0 {
		return nil, g.overBound(bw)
	}
	return bw, nil
}

// see takes body bytes p, found at offset at of the body, into the
// prefixes they hold; once all are whole it checks the batch.
func (g *framedReader) see(bw *batchWatch, at int64, p []byte) error {
	for i := range bw.prefix {
		x := &bw.prefix[i]
		if x.got == 8 {
			continue
		}
		from, to := max(x.at+int64(x.got), at), min(x.at+8, at+int64(len(p)))
		if from >= to {
			continue
		}
		x.got += copy(x.b[x.got:], p[from-at:to-at])
		if x.got == 8 {
			u := int64(binary.LittleEndian.Uint64(x.b[:]))
			if u == -1 { // stored uncompressed: the rest of the buffer
				u = x.raw
			}
			bw.sizes[x.col] = u
			bw.pending--
		}
	}
	if bw.pending > 0 {
		return nil
	}
	return g.overBound(bw)
}

// overBound returns the error of the first watched column of a batch whose
// data buffer is over its bound, or nil; then it counts the batch's rows.
func (g *framedReader) overBound(bw *batchWatch) error {
	for i, c := range g.watch {
		values, levels := bw.values[i], bw.levels[i]
		if len(c.path) == 1 {
			// A row's: only the batch's rows are read, however many
			// values its field node declares (a node longer than its
			// batch passes arrow-go and checkColumns), and checkBatch
			// refuses more rows than MaxRowGroupRows.
			rows := max(bw.rows, 0)
			values, levels = min(values, rows, g.lim.MaxRowGroupRows), min(levels, rows)
		}
		bound := int64(math.MaxInt64)
		if values <= (math.MaxInt64-valueSlack)/c.vcap { // a lie of a length makes no bound
			bound = values*c.vcap + valueSlack
		}
		if size := bw.sizes[i]; size > bound {
			e := &ValueLimitError{Column: strings.Join(c.path, "."), Batch: true, RowGroup: g.batches,
				Bytes: size, Values: min(bw.values[i], values), Limit: c.vcap}
			if len(c.path) == 1 {
				e.FirstRow, e.Rows = g.rows+1, levels
			}
			return e
		}
	}
	g.batches++
	g.rows += bw.rows
	return nil
}
