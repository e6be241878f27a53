package statecol

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/schema"
)

// WriteState writes rows (sorted by info_hash, as state files are) to w
// as one Parquet file of the state schema, column by column: the values
// are laid out straight from the rows (PLAIN, dictionary pages for the
// low-cardinality strings), one Snappy-compressed page per column chunk.
// parquet-go's row writer spent 4-5x longer on the same rows, and state
// is rewritten by every dedup, merge and union.
//
// The schema (column order, types, logical and converted types) is taken
// from the file parquet-go writes for schema.State, so readers see the same
// schema whichever writer made a file; page headers and the footer are
// encoded with parquet-go's Thrift codec and levels with its RLE encoder.
// Zero timestamps, empty strings and empty v2 hashes are nulls in the
// optional columns, as parquet-go writes them.
func WriteState(w io.Writer, rows []schema.State) error {
	sw, md, err := beginState(w, int64(len(rows)))
	if err != nil {
		return err
	}
	defer sw.release()
	for start := 0; start < len(rows); start += rowGroupRows {
		rg, err := sw.rowGroup(rows[start:min(len(rows), start+rowGroupRows)], len(md.RowGroups))
		if err != nil {
			return err
		}
		md.RowGroups = append(md.RowGroups, rg)
	}
	return sw.finish(md)
}

// beginState takes a writer from the pool and writes the file's magic.
func beginState(w io.Writer, rows int64) (*stateWriter, *format.FileMetaData, error) {
	t, err := stateTemplate()
	if err != nil {
		return nil, nil, err
	}
	sw := getWriter()
	sw.t, sw.off, sw.codec = t, 4, format.Snappy
	sw.w.Reset(w)
	if _, err := sw.w.WriteString("PAR1"); err != nil {
		sw.release()
		return nil, nil, err
	}
	md := &format.FileMetaData{Version: 1, Schema: t.schema, NumRows: rows,
		ColumnOrders: t.orders, CreatedBy: "infohash statecol"}
	return sw, md, nil
}

// release returns sw to the pool.
func (sw *stateWriter) release() {
	sw.w.Reset(io.Discard)
	select {
	case writers <- sw:
	default:
	}
}

// finish writes the footer and flushes.
func (sw *stateWriter) finish(md *format.FileMetaData) error {
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		return fmt.Errorf("statecol: footer: %w", err)
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(len(footer)))
	copy(tail[4:], "PAR1")
	sw.w.Write(footer)
	sw.w.Write(tail[:])
	return sw.w.Flush()
}

// ErrSpliceSchema is returned by Splice for a source file whose schema is
// not the current state schema (an older format): rewrite it instead.
var ErrSpliceSchema = errors.New("statecol: the file's schema is not the current state schema")

// Splice writes to w a copy of the state file src in which fn changes
// some rows in place. touched(first, n) says whether the row group of
// rows [first, first+n) holds rows to change; if so its rows are decoded,
// fn(first, rows) changes them (keeping every info_hash and the order)
// and returns the columns it changed: those columns are re-encoded, and
// every other column chunk is copied byte for byte, compressed pages and
// all. A row group nobody touches is copied whole without being decoded.
//
// So an update of a few columns of a big file costs reading it and
// re-encoding those columns, not a full rewrite.
//
// Only the columns in need are decoded for fn (the others read as zero
// values); fn must not change a column it does not need.
func Splice(w io.Writer, src *File, need Columns, touched func(first, n int64) bool, fn func(first int64, rows []schema.State) (Columns, error)) error {
	if err := src.Spliceable(); err != nil {
		return err
	}
	meta := src.pf.Metadata()
	sw, md, err := beginState(w, meta.NumRows)
	if err != nil {
		return err
	}
	defer sw.release()
	// parquet-go reads a whole column with the codec of its first chunk:
	// a re-encoded chunk uses the codec the column already has.
	codecs := make([]format.CompressionCodec, numStateColumns)
	for k := range codecs {
		codecs[k] = format.Snappy
		if len(meta.RowGroups) > 0 {
			codecs[k] = meta.RowGroups[0].Columns[k].MetaData.Codec
		}
	}
	var first int64
	for i, rg := range src.RowGroups() {
		n := rg.NumRows()
		var rows []schema.State
		var mask Columns
		if touched(first, n) {
			if cap(sw.rows) < int(n) {
				sw.rows = make([]schema.State, n)
			}
			// No clearing: the readers set every row of the columns in
			// need (nulls to zero values); the other fields keep what an
			// earlier row group left, which fn must not use and nothing
			// writes (mask ⊆ need).
			rows = sw.rows[:n]
			if err := src.readColumns(rg, rows, need); err != nil {
				return err
			}
			if mask, err = fn(first, rows); err != nil {
				return err
			}
			if mask&^need != 0 {
				return fmt.Errorf("statecol: splice changed columns %b it did not read", mask&^need)
			}
		}
		srcCols := meta.RowGroups[i].Columns
		out, err := sw.spliceRowGroup(rows, i, mask, codecs, func(col int) (format.ColumnChunk, error) {
			m := srcCols[col].MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start <= 0 || m.TotalCompressedSize < 0 {
				return format.ColumnChunk{}, fmt.Errorf("statecol: column %v: chunk at %d of %d bytes", m.PathInSchema, start, m.TotalCompressedSize)
			}
			got, err := io.CopyN(sw.w, io.NewSectionReader(src.f, start, m.TotalCompressedSize), m.TotalCompressedSize)
			if err != nil || got != m.TotalCompressedSize {
				return format.ColumnChunk{}, fmt.Errorf("statecol: copying column %v: %d of %d bytes: %v", m.PathInSchema, got, m.TotalCompressedSize, err)
			}
			shift := sw.off - start
			m.DataPageOffset += shift
			if m.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset += shift
			}
			if m.IndexPageOffset > 0 {
				m.IndexPageOffset += shift
			}
			m.BloomFilterOffset, m.BloomFilterLength = 0, 0
			cc := format.ColumnChunk{FileOffset: sw.off, MetaData: m}
			sw.off += m.TotalCompressedSize
			return cc, nil
		})
		if err != nil {
			return err
		}
		out.NumRows = n
		md.RowGroups = append(md.RowGroups, out)
		first += n
	}
	return sw.finish(md)
}

// Spliceable reports (as ErrSpliceSchema) why Splice cannot copy from f:
// a schema other than the current state schema, or a codec the writer
// does not have (Snappy and zstd it has).
func (f *File) Spliceable() error {
	if !parquet.EqualNodes(f.pf.Schema(), parquet.SchemaOf(schema.State{})) {
		return ErrSpliceSchema
	}
	for _, rg := range f.pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Snappy && c.MetaData.Codec != format.Zstd {
				return fmt.Errorf("%w (codec %v)", ErrSpliceSchema, c.MetaData.Codec)
			}
		}
	}
	return nil
}

// Changed reports the columns in which a and b differ.
func Changed(a, b *schema.State) Columns {
	var c Columns
	set := func(k int, differ bool) {
		if differ {
			c |= 1 << k
		}
	}
	set(cInfoHash, a.InfoHash != b.InfoHash)
	set(cInfoHashV2, !bytes.Equal(a.InfoHashV2, b.InfoHashV2))
	set(cHashType, a.HashType != b.HashType)
	set(cFirstSeen, a.FirstSeen != b.FirstSeen)
	set(cLastSeen, a.LastSeen != b.LastSeen)
	set(cSeenCount, a.SeenCount != b.SeenCount)
	set(cLastSource, a.LastSource != b.LastSource)
	set(cActivity, math.Float64bits(a.Activity) != math.Float64bits(b.Activity))
	set(cMetadataStatus, a.MetadataStatus != b.MetadataStatus)
	set(cAttempts, a.Attempts != b.Attempts)
	set(cLastAttempt, a.LastAttempt != b.LastAttempt)
	set(cLastFailure, a.LastFailure != b.LastFailure)
	set(cNextRetry, a.NextRetry != b.NextRetry)
	set(cLeaseID, a.LeaseID != b.LeaseID)
	set(cLeaseUntil, a.LeaseUntil != b.LeaseUntil)
	set(cTier, a.Tier != b.Tier)
	set(cBackoffStep, a.BackoffStep != b.BackoffStep)
	set(cBadMetadata, a.BadMetadata != b.BadMetadata)
	set(cReactivated, a.Reactivated != b.Reactivated)
	set(cAvoidPeers, !slices.Equal(a.AvoidPeers, b.AvoidPeers))
	return c
}

// Columns is a set of state columns, bit k for the k-th column of the
// file (info_hash is bit 0).
type Columns uint32

// AllColumns is every state column.
const AllColumns = Columns(1)<<numStateColumns - 1

// ColumnsNamed returns the set of the named state columns; it panics on
// a name that is not one (a programming error).
func ColumnsNamed(names ...string) Columns {
	var c Columns
	for _, n := range names {
		k := slices.Index(stateColumnNames[:], n)
		if k < 0 {
			panic("statecol: no state column " + n)
		}
		c |= 1 << k
	}
	return c
}

// RowGroupRows is the row group size of state files.
const RowGroupRows = 256 * 1024

// rowGroupRows is RowGroupRows, smaller in tests.
var rowGroupRows = RowGroupRows

// template is what every state file shares: parquet-go's schema of
// schema.State and the leaf columns in file order.
type template struct {
	schema []format.SchemaElement
	orders []format.ColumnOrder
	leaves []leafColumn
}

type leafColumn struct {
	path []string
	typ  format.Type
}

var stateTemplate = sync.OnceValues(func() (*template, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[schema.State](&buf)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("statecol: schema template: %w", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("statecol: schema template: %w", err)
	}
	t := &template{schema: pf.Metadata().Schema, orders: pf.Metadata().ColumnOrders}
	for k, path := range pf.Schema().Columns() {
		l, _ := pf.Schema().Lookup(path...)
		if k >= numStateColumns || path[0] != stateColumnNames[k] {
			return nil, fmt.Errorf("statecol: schema.State's column %d is %v, the writer expects %s", k, path, stateColumnNames[min(k, numStateColumns-1)])
		}
		t.leaves = append(t.leaves, leafColumn{path: path, typ: format.Type(l.Node.Type().Kind())})
	}
	if len(t.leaves) != numStateColumns {
		return nil, fmt.Errorf("statecol: schema.State has %d columns, the writer expects %d", len(t.leaves), numStateColumns)
	}
	return t, nil
})

var zstdCodec = &zstd.Codec{Level: zstd.SpeedFastest}

// writers keeps idle stateWriters (and their buffers) between files: a
// channel rather than a sync.Pool, which drops its items at every garbage
// collection and so made each file allocate its buffers anew.
var writers = make(chan *stateWriter, 8)

func getWriter() *stateWriter {
	select {
	case sw := <-writers:
		return sw
	default:
		// A buffer of its own: bufio.NewWriterSize(w) would return w
		// itself when it is a large enough *bufio.Writer, and the writer
		// would then share the caller's buffer with later users.
		return &stateWriter{w: bufio.NewWriterSize(io.Discard, 1<<20)}
	}
}

// stateWriter writes one file; its buffers are reused across row groups
// and, through writers, across files.
type stateWriter struct {
	t   *template
	w   *bufio.Writer
	off int64

	cols   [numStateColumns]colBuf
	codec  format.CompressionCodec // of the pages being written: Snappy, or a spliced file's own
	rows   []schema.State          // Splice's decoded row group
	levels []byte
	body   []byte
	comp   []byte
}

// The state columns in file order (checked against the template).
const (
	cInfoHash = iota
	cInfoHashV2
	cHashType
	cFirstSeen
	cLastSeen
	cSeenCount
	cLastSource
	cActivity
	cMetadataStatus
	cAttempts
	cLastAttempt
	cLastFailure
	cNextRetry
	cLeaseID
	cLeaseUntil
	cTier
	cBackoffStep
	cBadMetadata
	cReactivated
	cAvoidPeers
	numStateColumns
)

var stateColumnNames = [numStateColumns]string{"info_hash", "info_hash_v2", "hash_type", "first_seen",
	"last_seen", "seen_count", "last_source", "activity", "metadata_status", "attempts", "last_attempt",
	"last_failure", "next_retry", "lease_id", "lease_until", "tier", "backoff_step", "bad_metadata",
	"reactivated_at", "avoid_peers"}

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
			c.plain, c.idx = true, c.idx[:0]
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

func (sw *stateWriter) rowGroup(rows []schema.State, ordinal int) (format.RowGroup, error) {
	return sw.spliceRowGroup(rows, ordinal, AllColumns, nil, nil)
}

// spliceRowGroup writes one row group: the columns in mask encoded from
// rows, every other one copied by copyChunk (which writes the source
// chunk's bytes at sw.off and returns its metadata for there).
func (sw *stateWriter) spliceRowGroup(rows []schema.State, ordinal int, mask Columns, codecs []format.CompressionCodec,
	copyChunk func(col int) (format.ColumnChunk, error)) (format.RowGroup, error) {
	rg := format.RowGroup{NumRows: int64(len(rows)), FileOffset: sw.off, Ordinal: int16(ordinal)}
	if mask != 0 {
		sw.fill(rows, mask)
	}
	for k, leaf := range sw.t.leaves {
		var cc format.ColumnChunk
		var err error
		if mask&(1<<k) != 0 {
			if codecs != nil {
				sw.codec = codecs[k]
			}
			cc, err = sw.writeChunk(leaf, &sw.cols[k])
		} else {
			cc, err = copyChunk(k)
		}
		if err != nil {
			return rg, fmt.Errorf("statecol: column %s: %w", leaf.path[0], err)
		}
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
	}
	return rg, nil
}

// fill lays out the columns of rows in mask in one pass over them: each
// row's cache lines are read once, where a pass per column read them 20
// times.
func (sw *stateWriter) fill(rows []schema.State, mask Columns) {
	c := &sw.cols
	for k := range c {
		c[k].reset(len(rows))
		c[k].dictCol = k == cLastSource || k == cMetadataStatus || k == cTier || k == cLastFailure || k == cLeaseID
	}
	on := func(k int) bool { return mask&(1<<k) != 0 }
	if on(cInfoHash) {
		c[cInfoHash].vals = slices.Grow(c[cInfoHash].vals, 20*len(rows))
	}
	for _, k := range []int{cFirstSeen, cLastSeen, cSeenCount, cActivity} {
		if on(k) {
			c[k].vals = slices.Grow(c[k].vals, 8*len(rows))
		}
	}
	c[cAvoidPeers].entries = 0
	hash, v2, typ, first, last, count := on(cInfoHash), on(cInfoHashV2), on(cHashType), on(cFirstSeen), on(cLastSeen), on(cSeenCount)
	src, act, status, attempts, lastAt, fail := on(cLastSource), on(cActivity), on(cMetadataStatus), on(cAttempts), on(cLastAttempt), on(cLastFailure)
	next, lease, leaseUntil, tier, step, bad := on(cNextRetry), on(cLeaseID), on(cLeaseUntil), on(cTier), on(cBackoffStep), on(cBadMetadata)
	react, avoid := on(cReactivated), on(cAvoidPeers)
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
		if !avoid {
			continue
		}
		// required group (LIST) > repeated group list > required element:
		// one entry per element, or one null entry for an empty list.
		ap := &c[cAvoidPeers]
		if len(s.AvoidPeers) == 0 {
			ap.rep, ap.def = append(ap.rep, 0), append(ap.def, 0)
			ap.entries++
		}
		for k, p := range s.AvoidPeers {
			ap.rep, ap.def = append(ap.rep, min(uint8(k), 1)), append(ap.def, 1)
			ap.vals = binary.LittleEndian.AppendUint32(ap.vals, uint32(len(p)))
			ap.vals = append(ap.vals, p...)
			ap.entries++
		}
	}
	for k := range c {
		c[k].hasStats = c[k].lo <= c[k].hi
	}
	c[cActivity].hasStats = false
	if len(rows) > 0 && hash {
		lo, hi := 0, 0
		for i := range rows {
			if bytes.Compare(rows[i].InfoHash[:], rows[lo].InfoHash[:]) < 0 {
				lo = i
			} else if bytes.Compare(rows[i].InfoHash[:], rows[hi].InfoHash[:]) > 0 {
				hi = i
			}
		}
		c[cInfoHash].min, c[cInfoHash].max = bytes.Clone(rows[lo].InfoHash[:]), bytes.Clone(rows[hi].InfoHash[:])
	}
}

// writeChunk writes c's pages (dictionary, then one data page) and returns
// its metadata.
func (sw *stateWriter) writeChunk(leaf leafColumn, c *colBuf) (format.ColumnChunk, error) {
	start := sw.off
	st := format.Statistics{NullCount: c.nulls, MinValue: c.min, MaxValue: c.max}
	if c.hasStats {
		switch leaf.typ {
		case format.Int32:
			st.MinValue = binary.LittleEndian.AppendUint32(nil, uint32(c.lo))
			st.MaxValue = binary.LittleEndian.AppendUint32(nil, uint32(c.hi))
		case format.Int64:
			st.MinValue = binary.LittleEndian.AppendUint64(nil, uint64(c.lo))
			st.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(c.hi))
		}
	}
	md := format.ColumnMetaData{Type: leaf.typ, PathInSchema: leaf.path, Codec: sw.codec,
		NumValues: int64(c.entries), Statistics: st}
	dictIdx := c.dictCol && !c.plain && len(c.dict) > 0
	var uncompressed int64
	valuesEnc := format.Plain
	if dictIdx {
		valuesEnc = format.RLEDictionary
		md.DictionaryPageOffset = sw.off
		sw.body = sw.body[:0]
		for _, d := range c.dict {
			sw.body = binary.LittleEndian.AppendUint32(sw.body, uint32(len(d)))
			sw.body = append(sw.body, d...)
		}
		h := format.PageHeader{Type: format.DictionaryPage}
		h.DictionaryPageHeader.Set(format.DictionaryPageHeader{NumValues: int32(len(c.dict)), Encoding: format.Plain})
		u, err := sw.page(&h, sw.body)
		if err != nil {
			return format.ColumnChunk{}, err
		}
		uncompressed += u
		md.Encoding = append(md.Encoding, format.Plain, format.RLE, format.RLEDictionary)
	} else {
		md.Encoding = append(md.Encoding, format.Plain, format.RLE)
	}
	md.DataPageOffset = sw.off
	sw.body = sw.body[:0]
	var err error
	if leaf.path[0] == "avoid_peers" {
		if sw.body, err = sw.appendLevels(sw.body, c.rep); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	if len(c.def) > 0 || (c.entries == 0 && c.def != nil) {
		if sw.body, err = sw.appendLevels(sw.body, c.def); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	if dictIdx {
		enc := rle.DictionaryEncoding{}
		if c.vals, err = enc.EncodeInt32(c.vals[:0], c.idx); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	sw.body = append(sw.body, c.vals...)
	h := format.PageHeader{Type: format.DataPage}
	h.DataPageHeader.Set(format.DataPageHeader{NumValues: int32(c.entries), Encoding: valuesEnc,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE})
	u, err := sw.page(&h, sw.body)
	if err != nil {
		return format.ColumnChunk{}, err
	}
	uncompressed += u
	md.TotalUncompressedSize = uncompressed
	md.TotalCompressedSize = sw.off - start
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

// appendLevels appends a v1 data page's level section: the byte length,
// then the RLE/bit-packed levels (bit width 1: every state level is 0 or 1).
func (sw *stateWriter) appendLevels(dst []byte, levels []uint8) ([]byte, error) {
	enc := rle.Encoding{BitWidth: 1}
	var err error
	if sw.levels, err = enc.EncodeLevels(sw.levels[:0], levels); err != nil {
		return dst, err
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(sw.levels)))
	return append(dst, sw.levels...), nil
}

// page compresses body and writes it with its header h; it returns the
// uncompressed size, header included.
func (sw *stateWriter) page(h *format.PageHeader, body []byte) (int64, error) {
	if len(body) > math.MaxInt32/2 {
		return 0, fmt.Errorf("statecol: a page of %d bytes", len(body))
	}
	switch sw.codec {
	case format.Snappy:
		if n := s2.MaxEncodedLen(len(body)); cap(sw.comp) < n {
			sw.comp = make([]byte, n)
		}
		sw.comp = s2.EncodeSnappy(sw.comp[:cap(sw.comp)], body)
	case format.Zstd:
		var err error
		if sw.comp, err = zstdCodec.Encode(sw.comp[:0], body); err != nil {
			return 0, fmt.Errorf("statecol: zstd: %w", err)
		}
	default:
		return 0, fmt.Errorf("statecol: no encoder for codec %v", sw.codec)
	}
	h.UncompressedPageSize = int32(len(body))
	h.CompressedPageSize = int32(len(sw.comp))
	hdr, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		return 0, fmt.Errorf("statecol: page header: %w", err)
	}
	sw.w.Write(hdr)
	if _, err := sw.w.Write(sw.comp); err != nil {
		return 0, err
	}
	sw.off += int64(len(hdr) + len(sw.comp))
	return int64(len(hdr) + len(body)), nil
}
