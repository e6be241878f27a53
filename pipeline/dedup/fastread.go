package dedup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdbits "math/bits"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
)

// The fast path reads observation files column by column from the pages'
// decoded values, which is ~20× cheaper than assembling rows. It serves
// infohash's own layout (info_hash FIXED_LEN_BYTE_ARRAY(20), observed_at
// INT64 milliseconds) and the usual layouts of other writers: info_hash as
// BYTE_ARRAY (DuckDB's BLOB; 20 bytes, or 32 for a v2 hash; or VARCHAR of
// hex, see texthash.go), any column optional (DuckDB's and Arrow's
// default), observed_at in micro- or nanoseconds. It leaves the rest to
// readParquet.

// fastColumns locates the columns the fast path needs; ok is false when
// the layout does not fit it.
type fastColumns struct {
	hash, at, src, typ, v2 *parquet.Column
	port, addr             *parquet.Column // peer_port and node_addr, when both are there (peers.go)
	hashBytes              bool            // info_hash is BYTE_ARRAY (else FIXED_LEN_BYTE_ARRAY(20))
	typUnsigned            bool            // hash_type's values are unsigned (rowio.UnsignedInt)
	portUnsigned           bool            // peer_port's are read as unsigned (portUnsigned)
	atDiv                  int64           // observed_at's units per millisecond, or int96Time
	// The string types of info_hash and info_hash_v2 when they hold
	// text (hex), else "" (see rowio.TextType).
	hashText, v2Text string
}

func fastLayout(pf *parquet.File) (fastColumns, bool) {
	root := pf.Root()
	c := fastColumns{hash: root.Column("info_hash"), at: root.Column("observed_at"),
		src: root.Column("source"), typ: root.Column("hash_type"), v2: root.Column("info_hash_v2"), atDiv: 1}
	flat := func(col *parquet.Column) bool {
		return col.Leaf() && col.MaxRepetitionLevel() == 0 && col.MaxDefinitionLevel() <= 1
	}
	if c.hash == nil || c.at == nil || !flat(c.hash) || !flat(c.at) {
		return c, false
	}
	switch ht := c.hash.Type(); {
	case ht.Kind() == parquet.FixedLenByteArray && ht.Length() == 20:
	case ht.Kind() == parquet.ByteArray:
		c.hashBytes, c.hashText = true, rowio.TextType(ht)
	default:
		return c, false
	}
	var ok bool
	if c.atDiv, ok = atUnits(c.at.Type()); !ok {
		return c, false
	}
	for _, col := range []*parquet.Column{c.src, c.typ, c.v2} {
		if col != nil && !flat(col) {
			return c, false
		}
	}
	if c.src != nil && c.src.Type().Kind() != parquet.ByteArray {
		return c, false
	}
	if c.typ != nil && c.typ.Type().Kind() != parquet.Int32 {
		return c, false
	}
	c.typUnsigned = c.typ != nil && rowio.UnsignedInt(c.typ.Type())
	if c.v2 != nil && c.v2.Type().Kind() != parquet.ByteArray {
		return c, false
	}
	if c.v2 != nil {
		c.v2Text = rowio.TextType(c.v2.Type())
	}
	c.port, c.addr = peerColumns(root, flat)
	c.portUnsigned = c.port != nil && portUnsigned(c.port)
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
	long   []uint64               // bit per row: info_hash was a 32-byte (v2) hash
	long32 [][32]byte             // those rows' info_hash, which info_hash_v2 must repeat (made on the first)
	badV2  int                    // first row whose info_hash_v2 is not its info_hash's, -1 if none
	badV2h [32]byte               // that row's info_hash_v2
	srcIDs []uint16               // a plain source page's interned values
	// Announced peers (peers.go): whether the row group's peer_port and
	// node_addr are read, the rows' ports, and 1 + the interned endpoint
	// of each row that named one (peer is valid while hasPeers).
	peerCols bool
	nullCol  bool // peer_port is there but all null in the row group: no row has a port (noport.go)
	port     []int32
	peer     []endpoint
	hasPeers bool

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
	peer   []endpoint             // per record, its announced endpoint (0: none); empty when no record has one
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
	return &rowio.CorruptError{Format: "Parquet", Err: fmt.Errorf("row group at row %d: %w", first+1, err)}
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
		// In place: a literal built on the stack was copied by loads that
		// store forwarding could not serve (scatter: 11% of CPU, then 6%).
		o := &out.recs[k]
		o.h, o.src, o.typ, o.at = *h, r.src[i], r.typ[i], r.at[i]
		o.v2 = r.v2 != nil && r.hasV2[i>>6]&(1<<(i&63)) != 0
	}
	r.scatterPeers(n, &counts, out)
}

// Row groups are decoded, all columns side by side, and folded in
// slices, foldSlices of them in flight: memory holds a few slices, not a
// row group's columns and records (two decoded 262k-row groups were
// 33 MB, a sixth of a 10M-row run's peak).
const foldSlices = 3

// foldSliceRows is the slice size for an input of rows rows: a slice
// costs ~127 bytes a row (columns and records). Up to 16M rows, 16k-row
// slices: their 2 MB stay in cache between the decoder and the fold (a
// 10M-row read took 7% less CPU than with 32k-row slices, measured
// alternating). Past that rows/512 rows, between 32k and 256k, keeps the
// slices near 1/4 byte per input row, a few percent of what its
// aggregates take, and large inputs fold faster in large slices: 32k-row
// slices made a 100M-row fold 15% slower than 256k-row ones.
func foldSliceRows(rows int64) int {
	if rows <= 16<<20 {
		return 1 << 14
	}
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
		defer func() {
			// parquet-go panics on some crafted pages: bad input, as the
			// reading goroutine's recover makes it (readInput).
			if p := recover(); p != nil {
				decErr = rowio.PanicError(p, "Parquet")
			}
		}()
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
					if re, ok := errors.AsType[*rowError](err); ok {
						decErr = fmt.Errorf("row %d: %s", first+re.row+1, re.msg)
					}
					return
				}
				// b.fut is this goroutine's while it runs: the
				// caller reads it only after full is closed.
				if err := cols.checkRows(n, first+int64(lo), &b.fut); err != nil {
					decErr = err
					return
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
		b.view(rb.srcs, b.announceOf(rb.srcs))
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
	hashPage := r.hashPage
	switch {
	case c.hashText != "":
		hashPage = r.hashTextPage(c.hashText)
	case c.hashBytes:
		hashPage = r.hashBytesPage
	}
	hash := newColReader("info_hash", ccs[c.hash.Index()], c.hash.MaxDefinitionLevel(), hashPage)
	at := newColReader("observed_at", ccs[c.at.Index()], c.at.MaxDefinitionLevel(),
		func(p parquet.Page) (func(row, v, n int), error) { return r.atPage(p, c.atDiv) })
	hash.noNulls, at.noNulls = true, true
	r.readers = append(r.readers, hash, at)
	if c.src != nil {
		r.readers = append(r.readers, newColReader("source", ccs[c.src.Index()], c.src.MaxDefinitionLevel(),
			func(p parquet.Page) (func(row, v, n int), error) { return r.srcPage(p, b) }))
	}
	if c.typ != nil {
		r.readers = append(r.readers, newColReader("hash_type", ccs[c.typ.Index()], c.typ.MaxDefinitionLevel(), r.typPageFor(c.typUnsigned)))
	}
	if c.v2 != nil {
		v2Page := r.v2Page
		if c.v2Text != "" {
			v2Page = r.v2TextPage(c.v2Text)
		}
		r.readers = append(r.readers, newColReader("info_hash_v2", ccs[c.v2.Index()], c.v2.MaxDefinitionLevel(), v2Page))
	}
	// Last: they read the source. A chunk of null ports (no
	// announce_peer row) is not decoded at all.
	r.peerCols = c.port != nil && c.src != nil && !statecol.AllNull(ccs[c.port.Index()], rg.NumRows())
	r.nullCol = c.port != nil && c.src != nil && !r.peerCols
	if r.peerCols {
		r.readers = append(r.readers,
			newColReader("peer_port", ccs[c.port.Index()], c.port.MaxDefinitionLevel(),
				r.portPageFor(c.port.Type().Kind(), c.portUnsigned, portLimitOf(c.port.Type()), b)),
			newColReader("node_addr", ccs[c.addr.Index()], c.addr.MaxDefinitionLevel(), r.nodeAddrPage(b)))
	}
}

// load decodes the open row group's next n rows into rows [0, n).
func (r *rgBuf) load(n int, b *batch) error {
	r.reset(n, b)
	for _, cr := range r.readers {
		if err := cr.read(0, n); err != nil {
			return err
		}
	}
	r.typeLongHashes()
	r.countNullPorts(n, b)
	return nil
}

// typeLongHashes types the rows whose info_hash had 32 bytes as v2, whatever
// their hash_type column said; it runs after every column is read.
func (r *rgBuf) typeLongHashes() {
	for w, bits := range r.long {
		for ; bits != 0; bits &= bits - 1 {
			r.typ[w*64+stdbits.TrailingZeros64(bits)] = schema.HashV2
		}
	}
}

// checkRows checks rows [0, n) (row first of the input onwards): an
// absent hash_type is v1, and every time must be plausible. A time past
// f's bound is read as the run's clock (see FutureSkew).
func (r *rgBuf) checkRows(n int, first int64, f *future) error {
	for k := range n {
		if k == r.badV2 {
			if r.long[k>>6]&(1<<(k&63)) != 0 {
				return v2DiffersError(first+int64(k), r.long32[k][:])
			}
			return v2NotOfHashError(first+int64(k), r.hashes[k], r.badV2h[:])
		}
		if r.typ[k] == 0 {
			r.typ[k] = schema.HashV1
		}
		if err := checkObs(first+int64(k), r.typ[k], r.at[k]); err != nil {
			return err
		}
		if r.at[k] > f.latest {
			r.at[k] = f.over(r.at[k])
		}
	}
	return nil
}

// putHash sets row's hash from a BYTE_ARRAY value of 20 bytes, or of 32:
// a v2 hash, keyed by its first 20 as the DHT does, kept whole and typed
// v2 by typeLongHashes.
func (r *rgBuf) putHash(row int, h []byte) {
	copy(r.hashes[row][:], h)
	if len(h) == 32 {
		r.keepV2(row, h)
		r.long[row>>6] |= 1 << (row & 63)
		if len(r.long32) < len(r.hashes) {
			r.long32 = make([][32]byte, len(r.hashes))
		}
		r.long32[row] = [32]byte(h)
	}
}

// putV2 sets row's full v2 hash from its info_hash_v2 column, read after
// info_hash. A row whose info_hash was a 32-byte hash gave its full v2
// hash already, and a 20-byte info_hash is the first 20 bytes of its full
// v2 hash (the DHT's key): an info_hash_v2 that is another hash is bad
// input, which checkRows reports (the column readers cannot fail a row).
func (r *rgBuf) putV2(row int, h []byte) {
	long := r.long[row>>6]&(1<<(row&63)) != 0
	if (long && [32]byte(h) != r.long32[row]) || (!long && [20]byte(h[:20]) != r.hashes[row]) {
		if r.badV2 < 0 {
			r.badV2, r.badV2h = row, [32]byte(h)
		}
		return
	}
	r.keepV2(row, h)
}

// v2DiffersError is the bad input of row row, whose 32-byte info_hash h
// and info_hash_v2 are two different v2 hashes.
func v2DiffersError(row int64, h []byte) error {
	return fmt.Errorf("row %d: info_hash_v2 differs from the row's 32-byte info_hash %x", row+1, h)
}

// v2NotOfHashError is the bad input of row row, whose info_hash_v2 v2
// does not start with its 20-byte info_hash h: two different hashes.
func v2NotOfHashError(row int64, h schema.Hash, v2 []byte) error {
	return fmt.Errorf("row %d: info_hash_v2 %x does not start with the row's info_hash %x", row+1, v2, h)
}

// reset makes rows [0, n) empty: no hash type, the source of rows
// without one ("import", whose id it returns), no v2 hash.
func (r *rgBuf) reset(n int, b *batch) (imp uint16) {
	r.hashes = resize(r.hashes, n)
	r.at = resize(r.at, n)
	r.src = resize(r.src, n)
	r.typ = resize(r.typ, n)
	clear(r.typ)
	r.v2 = nil
	r.hasV2 = resize(r.hasV2, n/64+1)
	clear(r.hasV2)
	r.long = resize(r.long, n/64+1)
	clear(r.long)
	r.badV2 = -1
	r.hasPeers = false
	if r.peerCols {
		r.port = resize(r.port, n)
		fillNullPorts(r.port)
	}
	imp, _ = b.intern(schema.SourceImport) // a valid source
	for i := range r.src {
		r.src[i] = imp
	}
	return imp
}

// keepV2 records row i's full v2 hash.
func (r *rgBuf) keepV2(i int, h []byte) {
	if r.v2 == nil {
		r.v2 = map[schema.Hash][]byte{}
	}
	r.v2[r.hashes[i]] = append([]byte(nil), h...)
	r.hasV2[i>>6] |= 1 << (i & 63)
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
