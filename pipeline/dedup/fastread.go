package dedup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// The fast path reads observation files column by column from the pages'
// decoded values, which is ~20× cheaper than assembling rows; it serves
// files in infohash's own layout (info_hash FIXED_LEN_BYTE_ARRAY(20),
// observed_at INT64 milliseconds) and leaves the rest to readParquet.

// fastColumns locates the columns the fast path needs; ok is false when
// the layout does not fit it.
type fastColumns struct {
	hash, at, src, typ, v2 *parquet.Column
}

func fastLayout(pf *parquet.File) (fastColumns, bool) {
	root := pf.Root()
	c := fastColumns{hash: root.Column("info_hash"), at: root.Column("observed_at"),
		src: root.Column("source"), typ: root.Column("hash_type"), v2: root.Column("info_hash_v2")}
	if c.hash == nil || c.at == nil || !c.hash.Leaf() || !c.at.Leaf() {
		return c, false
	}
	ht, at := c.hash.Type(), c.at.Type()
	if ht.Kind() != parquet.FixedLenByteArray || ht.Length() != 20 || c.hash.MaxDefinitionLevel() != 0 ||
		at.Kind() != parquet.Int64 || c.at.MaxDefinitionLevel() != 0 {
		return c, false
	}
	if lt := at.LogicalType(); lt != nil && lt.Value != nil {
		ts, ok := lt.Value.(*format.TimestampType)
		if !ok {
			return c, false
		}
		if _, ms := ts.Unit.Value.(*format.MilliSeconds); !ms {
			return c, false
		}
	}
	if c.src != nil && (!c.src.Leaf() || c.src.Type().Kind() != parquet.ByteArray || c.src.MaxRepetitionLevel() != 0) {
		return c, false
	}
	if c.typ != nil && (!c.typ.Leaf() || c.typ.Type().Kind() != parquet.Int32 || c.typ.MaxRepetitionLevel() != 0) {
		return c, false
	}
	if c.v2 != nil && (!c.v2.Leaf() || c.v2.Type().Kind() != parquet.ByteArray || c.v2.MaxRepetitionLevel() != 0) {
		return c, false
	}
	return c, true
}

// rgBuf holds a slice of a row group's decoded columns; only the decoding
// goroutine touches it.
type rgBuf struct {
	hashes []schema.Hash
	at     []int64
	src    []uint16
	typ    []int8
	v2     map[schema.Hash][]byte // full v2 hashes by their truncation
	hasV2  []uint64               // bit per row: has an entry in v2 (a map lookup per row cost 3%)

	readers []*colReader // the row group's columns being decoded
}

// recBuf is a slice of a row group's rows grouped by partition
// (recs[bounds[p]:bounds[p+1]] are partition p's): folding reads them in
// order. Taking the columns in partition order instead (a gather) missed
// the cache on almost every row, and cost more than the tables' own
// misses.
type recBuf struct {
	recs   []obsRec
	bounds [257]int32
	v2     map[schema.Hash][]byte // the slice's full v2 hashes
	srcs   []string               // the sources interned when these rows were decoded
}

// obsRec is one observation as the fold reads it (32 bytes).
type obsRec struct {
	h   schema.Hash
	src uint16
	typ int8
	v2  bool // its full v2 hash is in recBuf.v2[h]
	at  int64
}

// corrupt is the error for a row group (starting at row first) whose
// columns do not decode.
func corrupt(first int64, err error) error {
	return &rowio.CorruptError{Format: "Parquet", Err: fmt.Errorf("row group at row %d: %w", first, err)}
}

// scatter fills out with the n decoded rows: a counting sort by the
// hashes' first byte. It runs on the decoding goroutine, while
// the columns are still in its cache.
func (r *rgBuf) scatter(n int, out *recBuf) {
	var counts [257]int32
	for i := 0; i < n; i++ {
		counts[int(r.hashes[i][0])+1]++
	}
	for p := 1; p <= 256; p++ {
		counts[p] += counts[p-1]
	}
	out.bounds = counts
	out.recs = resize(out.recs, n)
	out.v2 = r.v2
	next := counts
	for i := 0; i < n; i++ {
		h := &r.hashes[i]
		k := next[h[0]]
		next[h[0]]++
		out.recs[k] = obsRec{h: *h, src: r.src[i], typ: r.typ[i], at: r.at[i],
			v2: r.v2 != nil && r.hasV2[i>>6]&(1<<(i&63)) != 0}
	}
}

// Row groups are decoded, all columns side by side, and folded in
// slices, foldSlices of them in flight: memory holds a few slices, not a
// row group's columns and records (two decoded 262k-row groups were
// 33 MB, a sixth of a 10M-row run's peak).
const foldSlices = 3

// foldSliceRows is the slice size for an input of rows rows: a slice
// costs ~127 bytes a row (columns and records), so rows/512 rows, between
// 32k and 256k, keeps the slices near 1/4 byte per input row, a few
// percent of what its aggregates take. Small slices fold slower: 32k-row
// slices made a 100M-row fold 15% slower than 256k-row ones (at 10M rows
// the difference was 5-10%).
func foldSliceRows(rows int64) int {
	s := 1 << 15
	for s < 1<<18 && int64(s) < rows/512 {
		s *= 2
	}
	return s
}

// readFast feeds every row of pf to b; it returns the rows read. A
// goroutine decodes row groups and scatters them into slices that the
// caller folds in as they come, on the other core.
func readFast(ctx context.Context, name string, pf *parquet.File, c fastColumns, b *batch) (int64, error) {
	rgs := pf.RowGroups()
	if len(rgs) == 0 {
		return 0, nil
	}
	slice := foldSliceRows(pf.NumRows())
	free, full := make(chan *recBuf, foldSlices), make(chan *recBuf, foldSlices)
	for range foldSlices {
		free <- &recBuf{}
	}
	stop := make(chan struct{})
	var decErr error
	go func() {
		defer close(full)
		cols := &rgBuf{}
		defer cols.close()
		var first int64
		for i := range rgs {
			select {
			case <-stop:
				return
			default:
			}
			rows := int(rgs[i].NumRows())
			cols.open(rgs[i], c, b)
			for lo := 0; lo < rows; lo += slice {
				n := min(slice, rows-lo)
				if err := cols.load(n, b); err != nil {
					decErr = corrupt(first, err)
					return
				}
				for k := 0; k < n; k++ {
					if cols.typ[k] == 0 {
						cols.typ[k] = schema.HashV1
					}
					if err := checkObs(first+int64(lo+k), cols.typ[k], cols.at[k]); err != nil {
						decErr = err
						return
					}
				}
				var rb *recBuf
				select {
				case rb = <-free:
				case <-stop:
					return
				}
				cols.scatter(n, rb)
				rb.srcs = b.srcs // sources are only appended: the ids rb holds stay valid
				full <- rb       // never blocks: there are only foldSlices buffers
			}
			if err := cols.finish(); err != nil {
				decErr = corrupt(first, err)
				return
			}
			first += int64(rows)
		}
	}()
	var n int64
	var folding, waiting time.Duration // for --debug: which side of the pipeline waits
	defer func() {
		slog.Debug("dedup: read pipeline", "input", name, "folding_s", folding.Seconds(), "waiting_for_decode_s", waiting.Seconds())
	}()
	t0 := time.Now()
	for rb := range full {
		t1 := time.Now()
		waiting += t1.Sub(t0)
		if err := ctx.Err(); err != nil {
			close(stop)
			for range full {
			}
			return n, err
		}
		b.srcView = rb.srcs
		b.addRows(rb)
		n += int64(len(rb.recs))
		free <- rb
		t0 = time.Now()
		folding += t0.Sub(t1)
	}
	return n, decErr
}

// open starts decoding row group rg.
func (r *rgBuf) open(rg parquet.RowGroup, c fastColumns, b *batch) {
	r.close()
	ccs := rg.ColumnChunks()
	r.readers = append(r.readers,
		newColReader("info_hash", ccs[c.hash.Index()], 0, r.hashPage),
		newColReader("observed_at", ccs[c.at.Index()], 0, r.atPage))
	if c.src != nil {
		r.readers = append(r.readers, newColReader("source", ccs[c.src.Index()], c.src.MaxDefinitionLevel(),
			func(p parquet.Page) (func(row, v, n int), error) { return r.srcPage(p, b) }))
	}
	if c.typ != nil {
		r.readers = append(r.readers, newColReader("hash_type", ccs[c.typ.Index()], c.typ.MaxDefinitionLevel(), r.typPage))
	}
	if c.v2 != nil {
		r.readers = append(r.readers, newColReader("info_hash_v2", ccs[c.v2.Index()], c.v2.MaxDefinitionLevel(), r.v2Page))
	}
}

// load decodes the open row group's next n rows into rows [0, n).
func (r *rgBuf) load(n int, b *batch) error {
	r.hashes = resize(r.hashes, n)
	r.at = resize(r.at, n)
	r.src = resize(r.src, n)
	r.typ = resize(r.typ, n)
	clear(r.typ)
	r.v2 = nil
	r.hasV2 = resize(r.hasV2, n/64+1)
	clear(r.hasV2)
	imp := b.intern(schema.SourceImport) // the source of rows without one
	for i := range r.src {
		r.src[i] = imp
	}
	for _, cr := range r.readers {
		if err := cr.read(0, n); err != nil {
			return err
		}
	}
	return nil
}

// finish checks that the row group's columns hold no more rows than read.
func (r *rgBuf) finish() error {
	var first error
	for _, cr := range r.readers {
		if err := cr.finish(); err != nil && first == nil {
			first = err
		}
	}
	r.readers = r.readers[:0]
	return first
}

// close abandons the row group being decoded.
func (r *rgBuf) close() {
	for _, cr := range r.readers {
		cr.close()
	}
	r.readers = r.readers[:0]
}

func (r *rgBuf) hashPage(p parquet.Page) (func(row, v, n int), error) {
	data, size := dataOf(p).FixedLenByteArray()
	if size != 20 {
		return nil, errors.New("unexpected page layout")
	}
	if d := p.Dictionary(); d != nil {
		dict, _ := dataOf(d.Page()).FixedLenByteArray()
		idx, err := dictIndexes(p, len(dict)/20)
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				copy(r.hashes[row+i][:], dict[int(ix)*20:])
			}
		}, nil
	}
	if err := checkCount(p, len(data)/20); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i := range n {
			copy(r.hashes[row+i][:], data[(v+i)*20:])
		}
	}, nil
}

func (r *rgBuf) atPage(p parquet.Page) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int64()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.at[row+i] = dict[ix]
			}
		}, nil
	}
	vals := dataOf(p).Int64()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) { copy(r.at[row:row+n], vals[v:v+n]) }, nil
}

// srcPage interns the source column's values; a dictionary page interns
// each distinct value once.
func (r *rgBuf) srcPage(p parquet.Page, b *batch) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		data, offs := dataOf(d.Page()).ByteArray()
		ids := make([]uint16, 0, len(offs))
		for j := 0; j+1 < len(offs); j++ {
			ids = append(ids, b.intern(string(data[offs[j]:offs[j+1]])))
		}
		idx, err := dictIndexes(p, len(ids))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.src[row+i] = ids[ix]
			}
		}, nil
	}
	data, offs := dataOf(p).ByteArray()
	if err := checkCount(p, max(len(offs)-1, 0)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i := range n {
			s := data[offs[v+i]:offs[v+i+1]]
			id, ok := b.srcID[string(s)]
			if !ok {
				id = b.intern(string(s))
			}
			r.src[row+i] = id
		}
	}, nil
}

func (r *rgBuf) typPage(p parquet.Page) (func(row, v, n int), error) {
	if d := p.Dictionary(); d != nil {
		dict := dataOf(d.Page()).Int32()
		idx, err := dictIndexes(p, len(dict))
		if err != nil {
			return nil, err
		}
		return func(row, v, n int) {
			for i, ix := range idx[v : v+n] {
				r.typ[row+i] = int8(dict[ix])
			}
		}, nil
	}
	vals := dataOf(p).Int32()
	if err := checkCount(p, len(vals)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i, x := range vals[v : v+n] {
			r.typ[row+i] = int8(x)
		}
	}, nil
}

func (r *rgBuf) v2Page(p parquet.Page) (func(row, v, n int), error) {
	if p.Dictionary() != nil {
		return func(int, int, int) {}, nil // v2 hashes are unique: never dictionary-encoded by us
	}
	data, offs := dataOf(p).ByteArray()
	if err := checkCount(p, max(len(offs)-1, 0)); err != nil {
		return nil, err
	}
	return func(row, v, n int) {
		for i := range n {
			if offs[v+i+1]-offs[v+i] != 32 {
				continue
			}
			if r.v2 == nil {
				r.v2 = map[schema.Hash][]byte{}
			}
			r.v2[r.hashes[row+i]] = append([]byte(nil), data[offs[v+i]:offs[v+i+1]]...)
			r.hasV2[(row+i)>>6] |= 1 << ((row + i) & 63)
		}
	}, nil
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func dataOf(p parquet.Page) *encoding.Values {
	v := p.Data()
	return &v
}
