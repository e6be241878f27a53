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
	"github.com/infohash/infohash/formats/statecol"
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

// rgBuf holds one row group's decoded columns; only the decoding
// goroutine touches it.
type rgBuf struct {
	hashes []schema.Hash
	at     []int64
	src    []uint16
	typ    []int8
	v2     map[schema.Hash][]byte // full v2 hashes by their truncation
	hasV2  []uint64               // bit per row: has an entry in v2 (a map lookup per row cost 3%)
}

// recBuf is a slice of a row group's rows grouped by partition
// (recs[bounds[p]:bounds[p+1]] are partition p's): folding reads them in
// order. Taking the columns in partition order instead (a gather) missed
// the cache on almost every row, and cost more than the tables' own
// misses.
type recBuf struct {
	recs   []obsRec
	bounds [257]int32
	v2     map[schema.Hash][]byte // the row group's full v2 hashes
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

// scatter fills out with rows [lo, hi) of the decoded columns: a counting
// sort by the hashes' first byte. It runs on the decoding goroutine, while
// the columns are still in its cache.
func (r *rgBuf) scatter(lo, hi int, out *recBuf) {
	var counts [257]int32
	for i := lo; i < hi; i++ {
		counts[int(r.hashes[i][0])+1]++
	}
	for p := 1; p <= 256; p++ {
		counts[p] += counts[p-1]
	}
	out.bounds = counts
	out.recs = resize(out.recs, hi-lo)
	out.v2 = r.v2
	next := counts
	for i := lo; i < hi; i++ {
		h := &r.hashes[i]
		k := next[h[0]]
		next[h[0]]++
		out.recs[k] = obsRec{h: *h, src: r.src[i], typ: r.typ[i], at: r.at[i],
			v2: r.v2 != nil && r.hasV2[i>>6]&(1<<(i&63)) != 0}
	}
}

// Folding works on slices of foldSlice rows; foldSlices of them are in
// flight, together about one row group of the sizes infohash writes, so
// the fold has a row group's work while the next one is decoded. (Two
// whole decoded row groups, columns and records, cost twice the memory.)
const (
	foldSlice  = 1 << 16
	foldSlices = 4
)

// readFast feeds every row of pf to b; it returns the rows read. A
// goroutine decodes row groups and scatters them into slices that the
// caller folds in as they come, on the other core.
func readFast(ctx context.Context, name string, pf *parquet.File, c fastColumns, b *batch) (int64, error) {
	rgs := pf.RowGroups()
	if len(rgs) == 0 {
		return 0, nil
	}
	free, full := make(chan *recBuf, foldSlices), make(chan *recBuf, foldSlices)
	for range foldSlices {
		free <- &recBuf{}
	}
	stop := make(chan struct{})
	var decErr error
	go func() {
		defer close(full)
		cols := &rgBuf{}
		var first int64
		for i := range rgs {
			select {
			case <-stop:
				return
			default:
			}
			rows := int(rgs[i].NumRows())
			if err := cols.load(rgs[i], c, rows, b); err != nil {
				decErr = &rowio.CorruptError{Format: "Parquet", Err: fmt.Errorf("row group at row %d: %w", first, err)}
				return
			}
			for k := 0; k < rows; k++ {
				if cols.typ[k] == 0 {
					cols.typ[k] = schema.HashV1
				}
				if err := checkObs(first+int64(k), cols.typ[k], cols.at[k]); err != nil {
					decErr = err
					return
				}
			}
			for lo := 0; lo < rows; lo += foldSlice {
				var rb *recBuf
				select {
				case rb = <-free:
				case <-stop:
					return
				}
				cols.scatter(lo, min(lo+foldSlice, rows), rb)
				rb.srcs = b.srcs // sources are only appended: the ids rb holds stay valid
				full <- rb       // never blocks: there are only foldSlices buffers
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

func (r *rgBuf) load(rg parquet.RowGroup, c fastColumns, rows int, b *batch) error {
	r.hashes = resize(r.hashes, rows)
	r.at = resize(r.at, rows)
	r.src = resize(r.src, rows)
	r.typ = resize(r.typ, rows)
	clear(r.typ)
	r.v2 = nil
	r.hasV2 = resize(r.hasV2, rows/64+1)
	clear(r.hasV2)
	ccs := rg.ColumnChunks()
	k := 0
	err := statecol.EachPage(ccs[c.hash.Index()], func(p parquet.Page) error {
		data, size := dataOf(p).FixedLenByteArray()
		if size != 20 || p.NumNulls() != 0 {
			return errors.New("info_hash: unexpected page layout")
		}
		if d := p.Dictionary(); d != nil {
			dict, _ := dataOf(d.Page()).FixedLenByteArray()
			for _, ix := range dataOf(p).Int32() {
				if int(ix)*20+20 > len(dict) || k >= rows {
					return errors.New("info_hash: dictionary index out of range")
				}
				copy(r.hashes[k][:], dict[int(ix)*20:])
				k++
			}
			return nil
		}
		for off := 0; off+20 <= len(data); off += 20 {
			if k >= rows {
				return errors.New("info_hash: more values than rows")
			}
			copy(r.hashes[k][:], data[off:off+20])
			k++
		}
		return nil
	})
	if err == nil && k != rows {
		err = fmt.Errorf("info_hash: %d values for %d rows", k, rows)
	}
	if err != nil {
		return err
	}
	k = 0
	err = statecol.EachPage(ccs[c.at.Index()], func(p parquet.Page) error {
		vals := dataOf(p).Int64()
		if d := p.Dictionary(); d != nil {
			dict := dataOf(d.Page()).Int64()
			for _, ix := range dataOf(p).Int32() {
				if int(ix) >= len(dict) || k >= rows {
					return errors.New("observed_at: dictionary index out of range")
				}
				r.at[k] = dict[ix]
				k++
			}
			return nil
		}
		if k+len(vals) > rows {
			return errors.New("observed_at: more values than rows")
		}
		k += copy(r.at[k:], vals)
		return nil
	})
	if err == nil && k != rows {
		err = fmt.Errorf("observed_at: %d values for %d rows", k, rows)
	}
	if err != nil {
		return err
	}
	if err := r.loadSources(ccs, c, rows, b); err != nil {
		return err
	}
	if c.typ != nil {
		if err := optionalRows(ccs[c.typ.Index()], c.typ.MaxDefinitionLevel(), rows, func(p parquet.Page) func(row, v int) {
			vals := dataOf(p).Int32()
			if d := p.Dictionary(); d != nil {
				dict, idx := dataOf(d.Page()).Int32(), vals
				return func(row, v int) {
					if int(idx[v]) < len(dict) {
						r.typ[row] = int8(dict[idx[v]])
					}
				}
			}
			return func(row, v int) { r.typ[row] = int8(vals[v]) }
		}); err != nil {
			return fmt.Errorf("hash_type: %w", err)
		}
	}
	if c.v2 != nil {
		if err := optionalRows(ccs[c.v2.Index()], c.v2.MaxDefinitionLevel(), rows, func(p parquet.Page) func(row, v int) {
			data, offs := dataOf(p).ByteArray()
			if p.Dictionary() != nil {
				return func(int, int) {} // v2 hashes are unique: never dictionary-encoded by us
			}
			return func(row, v int) {
				if r.v2 == nil {
					r.v2 = map[schema.Hash][]byte{}
				}
				if v+1 < len(offs) && offs[v+1]-offs[v] == 32 {
					r.v2[r.hashes[row]] = append([]byte(nil), data[offs[v]:offs[v+1]]...)
					r.hasV2[row>>6] |= 1 << (row & 63)
				}
			}
		}); err != nil {
			return fmt.Errorf("info_hash_v2: %w", err)
		}
	}
	return nil
}

// loadSources interns the source column; a dictionary page interns each
// distinct value once.
func (r *rgBuf) loadSources(ccs []parquet.ColumnChunk, c fastColumns, rows int, b *batch) error {
	imp := b.intern(schema.SourceImport)
	if c.src == nil {
		for i := range r.src[:rows] {
			r.src[i] = imp
		}
		return nil
	}
	for i := range r.src[:rows] {
		r.src[i] = imp
	}
	return optionalRows(ccs[c.src.Index()], c.src.MaxDefinitionLevel(), rows, func(p parquet.Page) func(row, v int) {
		if d := p.Dictionary(); d != nil {
			data, offs := dataOf(d.Page()).ByteArray()
			ids := make([]uint16, 0, len(offs))
			for j := 0; j+1 < len(offs); j++ {
				ids = append(ids, b.intern(string(data[offs[j]:offs[j+1]])))
			}
			idx := dataOf(p).Int32()
			return func(row, v int) {
				if ix := int(idx[v]); ix < len(ids) {
					r.src[row] = ids[ix]
				}
			}
		}
		data, offs := dataOf(p).ByteArray()
		return func(row, v int) {
			if id, ok := b.srcID[string(data[offs[v]:offs[v+1]])]; ok {
				r.src[row] = id
			} else {
				r.src[row] = b.intern(string(data[offs[v]:offs[v+1]]))
			}
		}
	})
}

// optionalRows calls prepare once per page of a column chunk whose values
// are at most one level deep, then the function it returns for every
// non-null row with the row number and the index of its value in the page.
func optionalRows(cc parquet.ColumnChunk, maxDef, rows int, prepare func(p parquet.Page) func(row, v int)) error {
	row := 0
	err := statecol.EachPage(cc, func(p parquet.Page) error {
		n := int(p.NumRows())
		if row+n > rows {
			return errors.New("more values than rows")
		}
		if p.NumNulls() >= p.NumValues() {
			row += n
			return nil
		}
		fn := prepare(p)
		if maxDef == 0 || p.NumNulls() == 0 {
			for i := 0; i < n; i++ {
				fn(row+i, i)
			}
		} else {
			v := 0
			for i, d := range p.DefinitionLevels() {
				if int(d) == maxDef {
					fn(row+i, v)
					v++
				}
			}
		}
		row += n
		return nil
	})
	if err == nil && row != rows {
		err = fmt.Errorf("%d values for %d rows", row, rows)
	}
	return err
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
